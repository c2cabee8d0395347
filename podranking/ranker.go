package podranking

import v1 "k8s.io/api/core/v1"

// Ranker is an extra ranking rule, placed in front of or behind the built-in
// rules with WithRankersFirst or WithRankersLast.
//
// Score is called once per ranking with every pod (entries may be nil) and a
// scores slice of the same length to fill; a lower score is deleted first, and
// equal scores fall through to the next rule. then compares two pods by
// position using every rule that comes after this ranker (-1: i first, 1: j
// first, 0: equivalent), so a set-aware ranker such as ZoneSpread can order
// pods within a group before scoring them. Rankers must not keep pods, scores
// or then after Score returns.
type Ranker interface {
	Name() string
	Score(pods []*v1.Pod, scores []int64, then func(i, j int) int)
}

// RankerFunc adapts a per-pod scoring function to Ranker.
type RankerFunc struct {
	// RankerName is reported in explanations.
	RankerName string
	// Func scores one pod; lower goes first. It must handle a nil pod.
	Func func(pod *v1.Pod) int64
}

// Name implements Ranker.
func (r RankerFunc) Name() string { return r.RankerName }

// Score implements Ranker.
func (r RankerFunc) Score(pods []*v1.Pod, scores []int64, _ func(i, j int) int) {
	for i, p := range pods {
		scores[i] = r.Func(p)
	}
}
