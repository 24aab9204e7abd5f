// e2e guest in Go: goroutines racing for a mutex-protected log, a channel fan-out with
// several consumers, goroutines sleeping on timers, and an unsynchronized shared counter.
// Signature: the orders and the counter. Natively they vary; under detrun they must not.
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// check prints a failure signature and exits 1 when a knowable result is wrong, so a run
// that errs the same way every time cannot pass a comparison of runs.
func check(ok bool, format string, args ...interface{}) {
	if ok {
		return
	}
	msg := "goroutines: SELF-CHECK FAILED: " + fmt.Sprintf(format, args...) + "\n"
	os.Stdout.WriteString(msg)
	os.Stderr.WriteString(msg)
	os.Exit(1)
}

func work(seed, n int) int {
	x := uint32(seed)
	for i := 0; i < n; i++ {
		x = x*1103515245 + 12345
	}
	return int(x >> 16)
}

func main() {
	// 1. goroutines appending to a shared log under a mutex
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	sink := make([]int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				sink[g] += work(g*100+i, 20000)
				mu.Lock()
				order = append(order, fmt.Sprintf("%c%d", 'A'+g, i))
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	check(len(order) == 160, "%d log entries, want 160", len(order))
	next := make([]int, 8)
	for _, e := range order {
		g := int(e[0] - 'A')
		check(e == fmt.Sprintf("%c%d", 'A'+g, next[g]), "log entry %s where %c%d was due", e, 'A'+g, next[g])
		next[g]++
	}
	for i := 0; i < len(order); i += 20 {
		fmt.Println("log", strings.Join(order[i:i+20], " "))
	}

	// 2. fan-out through a buffered channel to several consumers
	items := make(chan int, 4)
	results := make(chan string, 100)
	var cwg sync.WaitGroup
	for c := 0; c < 4; c++ {
		cwg.Add(1)
		go func(c int) {
			defer cwg.Done()
			for it := range items {
				work(it, 10000*(c+1))
				results <- fmt.Sprintf("c%d<-%d", c, it)
			}
		}(c)
	}
	for i := 0; i < 40; i++ {
		items <- i
	}
	close(items)
	cwg.Wait()
	close(results)
	var got []string
	for r := range results {
		got = append(got, r)
	}
	seen := make(map[int]bool)
	for _, r := range got {
		var c, it int
		_, err := fmt.Sscanf(r, "c%d<-%d", &c, &it)
		check(err == nil && !seen[it] && it >= 0 && it < 40, "fan-out result %s repeated or unknown", r)
		seen[it] = true
	}
	check(len(seen) == 40, "%d of 40 items consumed", len(seen))
	fmt.Println("fan-out", strings.Join(got, " "))

	// 3. timers: goroutines sleeping different durations
	start := time.Now()
	wake := make(chan string, 16)
	for s := 0; s < 6; s++ {
		go func(s int) {
			time.Sleep(time.Duration(5+7*s) * time.Millisecond)
			slept := time.Since(start)
			check(slept >= time.Duration(5+7*s)*time.Millisecond, "s%d woke after %v", s, slept)
			wake <- fmt.Sprintf("s%d@%dus", s, time.Since(start).Microseconds())
		}(s)
	}
	var wakes []string
	for i := 0; i < 6; i++ {
		wakes = append(wakes, <-wake)
	}
	fmt.Println("wake", strings.Join(wakes, " "))

	// 4. a racy counter: no synchronization at all
	counter := 0
	var rwg sync.WaitGroup
	for g := 0; g < 4; g++ {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for i := 0; i < 200000; i++ {
				counter++
			}
		}()
	}
	rwg.Wait()
	check(counter >= 1 && counter <= 800000, "racy counter %d outside 1..800000", counter)
	fmt.Println("racy counter", counter)
}
