package podranking

import (
	"sort"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		pods := benchPods(n)
		sel := NewSelector(WithNow(testNow))
		reps := 200000 / n
		measure := func(name string, f func()) {
			f()
			c0 := cpuNow()
			for i := 0; i < reps; i++ {
				f()
			}
			t.Logf("N=%d %-12s cpu/op=%v", n, name, (cpuNow()-c0)/time.Duration(reps))
		}
		measure("ptd5", func() { sel.PodsToDelete(pods, pods, n/20) })
		measure("ptd50", func() { sel.PodsToDelete(pods, pods, n/2) })
		measure("order", func() { sel.Order(pods, pods) })
		ranks := RankByRelatedPodsOnSameNode(pods, pods).Rank
		work := make([]*v1.Pod, n)
		rk := make([]int, n)
		measure("baseline", func() {
			copy(work, pods)
			copy(rk, ranks)
			sort.Sort(refSorter{pods: work, rank: rk, now: testNow})
		})
	}
}
