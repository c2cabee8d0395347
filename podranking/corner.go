package podranking

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// HasEqualInstantTie reports whether any two pods of s hit the corner where
// upstream's Less is not a strict weak order: their comparison reaches the
// log-scaled ready-time rule (6) or creation-time rule (8), with log scaling
// on and Now non-zero, and the two instants are exactly equal and non-zero.
// Upstream falls through to later rules there, while the same pods against a
// third pod in the same bucket are ordered by UID, which can form a cycle;
// ctrlkit orders such a pair by UID instead. On inputs where this reports
// false (and UIDs are distinct), ctrlkit's order equals upstream's on every
// pair and is a strict weak order, so Select and PodsToDelete return what
// upstream's sort-then-slice returns, up to the order of pods every rule finds
// equivalent. Differential tests skip exactly the inputs for which it is
// true. It runs in O(n) expected time.
func (s ActivePodsWithRanks) HasEqualInstantTie() bool {
	pol := s.policy()
	if !pol.logScale {
		return false
	}
	type prefix struct {
		head uint64
		rank int
	}
	type readyGroup struct {
		prefix
		sec  int64
		nsec int32
	}
	type createdGroup struct {
		prefix
		regular, sidecar int32
		sec              int64
		nsec             int32
	}
	ready := make(map[readyGroup]struct{})
	created := make(map[createdGroup]struct{})
	var k sortKey
	for i, p := range s.Pods {
		if p == nil {
			continue
		}
		pol.makeKey(&k, p, s.rank(i), i)
		pre := prefix{head: k.head, rank: k.rank}
		if k.hasReady && !k.ready.zero {
			// Rules 1-5 tie and the ready instants are equal: the pair reaches
			// rule 6 with equal instants. Such a pod never reaches rule 8
			// against a pod with a different ready instant, so it needs no
			// creation-time entry beyond this one.
			g := readyGroup{pre, k.ready.sec, k.ready.nsec}
			if _, dup := ready[g]; dup {
				return true
			}
			ready[g] = struct{}{}
			continue
		}
		if k.created.zero {
			continue
		}
		// Not ready, or ready with a zero ready time: rule 6 ties, so the
		// pair reaches rule 8 when restarts tie too.
		reg, side := k.restarts()
		g := createdGroup{pre, reg, side, k.created.sec, k.created.nsec}
		if _, dup := created[g]; dup {
			return true
		}
		created[g] = struct{}{}
	}
	return false
}

// HasEqualInstantTie is ActivePodsWithRanks.HasEqualInstantTie for the
// ranking PodsToDelete builds from filteredPods and relatedPods at now.
func HasEqualInstantTie(filteredPods, relatedPods []*v1.Pod, now time.Time) bool {
	s := RankByRelatedPodsOnSameNode(filteredPods, relatedPods)
	s.Now.Time = now
	return s.HasEqualInstantTie()
}
