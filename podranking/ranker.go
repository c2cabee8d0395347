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
		if r.Func == nil {
			scores[i] = 0
			continue
		}
		scores[i] = r.Func(p)
	}
}

// order is one prepared ranking: a key per pod plus the extension scores.
type order struct {
	pol     policy
	keys    []sortKey
	pods    []*v1.Pod
	scores  []int64 // ranker r's scores are scores[r*n : (r+1)*n]
	rankers []Ranker
	nFirst  int // rankers[:nFirst] run before the built-in rules
}

// compareFrom compares pods i and j starting at stage; stages 0..nFirst-1 are
// the leading rankers, stage nFirst is the built-in rule set and the stages
// after it are the trailing rankers. It returns the deciding rule, the ranker
// index when an extension decided (else -1) and the sign.
func (o *order) compareFrom(stage, i, j int) (Rule, int, int) {
	n := len(o.keys)
	for s := stage; s <= len(o.rankers); s++ {
		if s == o.nFirst {
			if r, c := o.pol.compareBuiltin(&o.keys[i], &o.keys[j]); c != 0 {
				return r, -1, c
			}
			continue
		}
		r := s
		if s > o.nFirst {
			r = s - 1
		}
		sc := o.scores[r*n : (r+1)*n]
		if c := cmpInt(sc[i], sc[j]); c != 0 {
			return RuleExtension, r, c
		}
	}
	return RuleNone, -1, 0
}

// cmp is the total order selection uses: the rules, then input position.
func (o *order) cmp(i, j int32) int {
	var c int
	if len(o.rankers) == 0 {
		_, c = o.pol.compareBuiltin(&o.keys[i], &o.keys[j])
	} else {
		_, _, c = o.compareFrom(0, int(i), int(j))
	}
	if c != 0 {
		return c
	}
	return cmpInt(i, j)
}

// score runs the rankers back to front, so that the then-comparator handed to
// each one can already read the scores of every ranker after it.
func (o *order) score() {
	n := len(o.keys)
	for s := len(o.rankers); s >= 0; s-- {
		if s == o.nFirst {
			continue
		}
		r := s
		if s > o.nFirst {
			r = s - 1
		}
		next := s + 1
		then := func(i, j int) int {
			if i < 0 || j < 0 || i >= n || j >= n {
				return 0
			}
			_, _, c := o.compareFrom(next, i, j)
			return c
		}
		sc := o.scores[r*n : (r+1)*n]
		clear(sc)
		o.rankers[r].Score(o.pods, sc, then)
	}
}
