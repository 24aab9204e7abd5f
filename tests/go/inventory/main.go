// Inventory seen from Go: the clock, math/rand's default source, map iteration order,
// the CPU count and the pid.
package main

import (
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"time"
)

func main() {
	fmt.Println("time.Now", time.Now().UnixNano())
	fmt.Println("rand", rand.Int63(), rand.Intn(1000))
	m := map[string]int{}
	for i := 0; i < 20; i++ {
		m[fmt.Sprintf("key%02d", i)] = i
	}
	order := ""
	for k := range m {
		order += k[3:] + " "
	}
	fmt.Println("map order", order)
	fmt.Println("NumCPU", runtime.NumCPU(), "GOMAXPROCS", runtime.GOMAXPROCS(0))
	fmt.Println("pid", os.Getpid())
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	slept := time.Since(start) >= 20*time.Millisecond
	if !slept || len(m) != 20 {
		// knowable results: a failure signature, never a quiet "false"
		msg := fmt.Sprintf("inventory: SELF-CHECK FAILED: slept %v, map of %d keys\n", time.Since(start), len(m))
		os.Stdout.WriteString(msg)
		os.Stderr.WriteString(msg)
		os.Exit(1)
	}
	fmt.Println("slept at least 20ms:", slept)
}
