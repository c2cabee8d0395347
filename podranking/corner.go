package podranking

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// HasEqualInstantTie reports whether any two pods of s have exactly equal,
// non-zero instants at a rule that compares them on the log scale: the ready
// time rule (6) or the creation time rule (8), reached with rules 1 to 5 (and
// 7 for rule 8) tied, with log scaling on and Now non-zero. Such pods form an
// instant class of several pods. The class order (Select, Sorted,
// Selector.Order, PodsToDelete) agrees with upstream, and so with Less, on the
// pair itself (both fall through to the later rules), but orders a pod of
// another class in the same bucket against them by the class representative,
// the smallest UID of their class, where upstream's Less uses each pod's own
// UID and can be cyclic. On inputs where this reports false, every class holds
// one pod, the class order equals Less on every pair, and Select and
// PodsToDelete return what upstream's sort-then-slice returns, up to the
// order of pods every rule finds equivalent. Differential tests skip exactly
// the inputs for which it is true. It runs in O(n) expected time.
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
