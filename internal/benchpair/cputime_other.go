//go:build !unix

package benchpair

import "time"

// CPUTime is 0 where getrusage is missing: the cpu-ns/op column reads 0.
func CPUTime() time.Duration { return 0 }
