// Reads the clock as Go programs do (time.Now, time.Since: the runtime's vDSO calls, found
// through AT_SYSINFO_EHDR by version LINUX_2.6): 10000 reads, then a wait of 3 ms on the
// clock. Under detrun the values are virtual and the same every run.
package main

import (
	"fmt"
	"time"
)

func main() {
	start := time.Now()
	fmt.Println("start", start.UnixNano())
	backwards := 0
	last := start
	for i := 0; i < 10000; i++ {
		now := time.Now()
		if now.Before(last) {
			backwards++
		}
		last = now
	}
	fmt.Println("10000 reads, backwards", backwards, "last", last.UnixNano())
	reads := 0
	for time.Since(last) < 3*time.Millisecond {
		reads++
	}
	fmt.Println("waited 3ms in", reads, "reads; elapsed", time.Since(start).Nanoseconds())
}
