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
	nFirst  int  // rankers[:nFirst] run before the built-in rules
	slow    bool // leading rankers decide first, so entry's packed fields cannot
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

// entry is what selection and sorting move around: 32 bytes that decide most
// comparisons without touching the larger sortKey, which keeps partitioning
// and sorting within cache. Ties on the packed fields fall back to the full
// rules on the keys, then to input position.
type entry struct {
	head uint64 // rules 1-4, as sortKey.head
	rank int64  // rule 5, higher first
	fast uint64 // rule 6 prefix for ready pods under log scaling, else 0
	idx  int32
}

// fastReady packs the first rule after rank that can tell two pods with the
// same head apart. Pods with equal heads are both ready or both not, so the
// two encodings never meet. For a ready pod under log scaling it is rule 6: a
// zero ready time first (0), then the age bucket, then the first seven bytes
// of the instant class's representative UID (so classes must be assigned
// before entries are built). For a pod that is not ready, rule 6 does not apply and it is
// rule 7: restart counts, inverted so more restarts sort first (reading them
// eagerly here is cheap, as not-ready pods are few). Two different values
// decide exactly as compareBuiltin would; equal values, and every other case
// (packed as 0), defer to the full comparison.
func fastReady(k *sortKey, pol *policy) uint64 {
	if k.pod == nil {
		return 0
	}
	if !k.hasReady {
		reg, side := k.restarts()
		return uint64(^uint32(reg))<<32 | uint64(^uint32(side))
	}
	if !pol.logScale || k.ready.zero {
		return 0
	}
	return 1<<63 | uint64(k.ready.bucket+1)<<56 | k.r6.head>>8
}

// cmp is the total order selection uses: the rules, then input position.
func (o *order) cmp(a, b entry) int {
	if !o.slow {
		if a.head != b.head {
			return cmpInt(a.head, b.head)
		}
		if a.rank != b.rank {
			return cmpInt(b.rank, a.rank)
		}
		if a.fast != b.fast {
			return cmpInt(a.fast, b.fast)
		}
	}
	var c int
	if len(o.rankers) == 0 {
		_, c = o.pol.compareBuiltin(&o.keys[a.idx], &o.keys[b.idx])
	} else {
		_, _, c = o.compareFrom(0, int(a.idx), int(b.idx))
	}
	if c != 0 {
		return c
	}
	return cmpInt(a.idx, b.idx)
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
