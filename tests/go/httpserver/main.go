// An HTTP server in Go for the record/replay tests: the Go runtime's epoll network
// poller, its threads and its signal handling, driven by curl from outside. It prints the
// port it listens on, answers /hello with a request counter, and stops on SIGTERM.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	var hits int64
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		n := atomic.AddInt64(&hits, 1)
		fmt.Printf("request %d from %s: %s\n", n, r.RemoteAddr, r.URL.RawQuery)
		fmt.Fprintf(w, "hello %d %s at %s\n", n, r.URL.Query().Get("name"),
			time.Now().UTC().Format(time.RFC3339Nano))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on port %d\n", ln.Addr().(*net.TCPAddr).Port)
	srv := &http.Server{Handler: mux}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	go func() {
		<-stop
		srv.Close()
	}()
	srv.Serve(ln)
	fmt.Printf("served %d requests\n", atomic.LoadInt64(&hits))
}
