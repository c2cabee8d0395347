//go:build unix

package benchpair

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process has used, user and system. Reported
// per op beside ns/op, it measures a benchmark's work even when other
// processes share the cores and stretch the wall clock.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
