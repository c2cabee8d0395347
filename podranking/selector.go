package podranking

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Selector picks the pods to delete on scale-down with a fixed policy:
// upstream's rules (optionally without deletion cost or logarithmic
// scale-down), the clock that gives their reference time, and any extension
// rankers. It is immutable and safe for concurrent use.
type Selector struct {
	cfg     config
	rankers []Ranker
}

// NewSelector returns a Selector with upstream's default policy (deletion
// cost and logarithmic scale-down on, the real clock) changed by opts.
func NewSelector(opts ...Option) *Selector {
	s := &Selector{cfg: config{clock: clock.RealClock{}}}
	for _, o := range opts {
		o(&s.cfg)
	}
	s.rankers = append(slices.Clone(s.cfg.first), s.cfg.last...)
	return s
}

var defaultSelector = NewSelector()

// PodsToDelete returns the diff pods upstream's ReplicaSet controller deletes
// (getPodsToDelete): filteredPods ranked by the active relatedPods on the
// same node, sorted by ActivePodsWithRanks's rules with sort.Sort, the first
// diff taken. Only the first diff positions are sorted, with exactly
// sort.Sort's decisions. The reference time is the current time. It never reorders
// filteredPods (upstream sorts the caller's slice in place) and returns a new
// slice. diff <= 0 returns nil; diff >= len(filteredPods) returns a copy of
// filteredPods in input order, as upstream skips sorting then.
func PodsToDelete(filteredPods, relatedPods []*v1.Pod, diff int) []*v1.Pod {
	return defaultSelector.PodsToDelete(filteredPods, relatedPods, diff)
}

// PodsToDelete is the package-level PodsToDelete with this Selector's policy,
// clock and rankers.
func (s *Selector) PodsToDelete(filteredPods, relatedPods []*v1.Pod, diff int) []*v1.Pod {
	return s.PodsToDeleteMemo(nil, filteredPods, relatedPods, diff)
}

// Order returns all of filteredPods in deletion order (first to delete
// first), ranked by relatedPods as PodsToDelete does.
func (s *Selector) Order(filteredPods, relatedPods []*v1.Pod) []*v1.Pod {
	b := getBuffers(len(filteredPods))
	defer putBuffers(b)
	r := s.rank(filteredPods, relatedPods, s.cfg.policy(), b.keys, b.order)
	r.sortTo(len(filteredPods))
	return r.first(len(filteredPods))
}

// Explain is Rank(filteredPods, relatedPods).Explain(a, b). To explain
// several pairs of one scale-down, call Rank once and Explain on it.
func (s *Selector) Explain(filteredPods, relatedPods []*v1.Pod, a, b *v1.Pod) Decision {
	return s.Rank(filteredPods, relatedPods).Explain(a, b)
}
