package podranking

import (
	"cmp"
	"slices"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Ranking is one prepared ranking of pods: a key per pod, extracted once,
// and the deletion order, sorted once on first use. The choice of pods to
// delete and the explanations of that choice read the same Ranking, so
// explaining every victim costs no further sorting. A Ranking is safe for
// concurrent use; it never modifies the pods or the slice it was given.
type Ranking struct {
	pods    []*v1.Pod
	related []*v1.Pod
	sel     *Selector
	pol     policy
	keys    []key
	scores  []int64 // ranker r's scores are scores[r*n : (r+1)*n]

	orderOnce sync.Once
	order     []int32 // positions in deletion order

	indexOnce sync.Once
	index     map[*v1.Pod]int
}

// Rank prepares filteredPods for deletion, each ranked by the number of
// active pods of relatedPods on its node (upstream's
// getPodsRankedByRelatedPodsOnSameNode), at the Selector's current time.
func (s *Selector) Rank(filteredPods, relatedPods []*v1.Pod) *Ranking {
	onNode := make(map[string]int)
	for _, p := range relatedPods {
		if podstate.IsActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	r := s.prepare(filteredPods, func(_ int, p *v1.Pod) int { return onNode[p.Spec.NodeName] }, s.cfg.policy())
	r.related = relatedPods
	return r
}

// prepare extracts the keys, assigns instant classes when the policy asks
// for them, and runs the extension rankers.
func (s *Selector) prepare(pods []*v1.Pod, rankOf func(i int, p *v1.Pod) int, pol policy) *Ranking {
	r := &Ranking{pods: pods, sel: s, pol: pol, keys: make([]key, len(pods))}
	for i, p := range pods {
		rank := 0
		if p != nil {
			rank = rankOf(i, p)
		}
		r.pol.makeKey(&r.keys[i], p, rank, i)
	}
	if pol.consistentTies && pol.logScale {
		r.pol.classes = assignClasses(r.keys)
	}
	if len(s.rankers) > 0 {
		r.scores = make([]int64, len(pods)*len(s.rankers))
		r.score()
	}
	return r
}

// Len is the number of pods ranked.
func (r *Ranking) Len() int { return len(r.pods) }

// PodsToDelete returns the diff pods to delete first, as upstream's
// getPodsToDelete does: diff >= Len returns every pod in input order
// (upstream does not sort then) and diff <= 0 returns nil.
func (r *Ranking) PodsToDelete(diff int) []*v1.Pod {
	if diff <= 0 {
		return nil
	}
	if diff >= len(r.pods) {
		return slices.Clone(r.pods)
	}
	return r.podsInOrder(diff)
}

// Order returns every pod in deletion order, first to delete first.
func (r *Ranking) Order() []*v1.Pod { return r.podsInOrder(len(r.pods)) }

func (r *Ranking) podsInOrder(n int) []*v1.Pod {
	if n == 0 {
		return nil
	}
	r.orderOnce.Do(r.sort)
	out := make([]*v1.Pod, n)
	for i, pos := range r.order[:n] {
		out[i] = r.pods[pos]
	}
	return out
}

// sort computes the deletion order. For upstream's relation it is Go's own
// sort.Sort, over positions whose Less is upstream's Less on the keys and
// whose Swap moves a pod and its rank together as upstream's Swap does:
// sort.Sort then makes the same calls with the same answers as it does on
// upstream's ActivePodsWithRanks, so it leaves the same order, also where
// the relation is cyclic or pods are equivalent. The instant class order is
// a strict weak order; there, equivalent pods keep their input order.
func (r *Ranking) sort() {
	r.order = make([]int32, len(r.pods))
	for i := range r.order {
		r.order[i] = int32(i)
	}
	if r.pol.consistentTies {
		slices.SortFunc(r.order, func(a, b int32) int {
			if c := r.compare(int(a), int(b)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		return
	}
	if len(r.sel.rankers) == 0 {
		sort.Sort(byRules{keys: r.keys, order: r.order, pol: &r.pol})
		return
	}
	sort.Sort(byStages{r})
}

// byRules sorts positions by the built-in rules alone.
type byRules struct {
	keys  []key
	order []int32
	pol   *policy
}

func (s byRules) Len() int      { return len(s.order) }
func (s byRules) Swap(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] }
func (s byRules) Less(i, j int) bool {
	_, c := s.pol.compare(&s.keys[s.order[i]], &s.keys[s.order[j]])
	return c < 0
}

// byStages sorts positions by the rankers and the built-in rules.
type byStages struct{ r *Ranking }

func (s byStages) Len() int      { return len(s.r.order) }
func (s byStages) Swap(i, j int) { s.r.order[i], s.r.order[j] = s.r.order[j], s.r.order[i] }
func (s byStages) Less(i, j int) bool {
	return s.r.compare(int(s.r.order[i]), int(s.r.order[j])) < 0
}

// compare orders positions i and j by every stage.
func (r *Ranking) compare(i, j int) int {
	_, _, c := r.compareFrom(0, i, j)
	return c
}

// compareFrom compares positions i and j starting at stage; stages
// 0..nFirst-1 are the leading rankers, stage nFirst is the built-in rule set
// and the stages after it are the trailing rankers. It returns the deciding
// rule, the ranker index when an extension decided (else -1) and the sign.
func (r *Ranking) compareFrom(stage, i, j int) (Rule, int, int) {
	n, nFirst := len(r.keys), len(r.sel.cfg.first)
	for s := stage; s <= len(r.sel.rankers); s++ {
		if s == nFirst {
			if rule, c := r.pol.compare(&r.keys[i], &r.keys[j]); c != 0 {
				return rule, -1, c
			}
			continue
		}
		k := s
		if s > nFirst {
			k = s - 1
		}
		sc := r.scores[k*n : (k+1)*n]
		if c := cmp.Compare(sc[i], sc[j]); c != 0 {
			return RuleExtension, k, c
		}
	}
	return RuleNone, -1, 0
}

// score runs the rankers back to front, so that the then-comparator handed to
// each one can already read the scores of every ranker after it.
func (r *Ranking) score() {
	n, nFirst := len(r.keys), len(r.sel.cfg.first)
	for s := len(r.sel.rankers); s >= 0; s-- {
		if s == nFirst {
			continue
		}
		k := s
		if s > nFirst {
			k = s - 1
		}
		next := s + 1
		then := func(i, j int) int {
			_, _, c := r.compareFrom(next, i, j)
			return c
		}
		r.sel.rankers[k].Score(r.pods, r.scores[k*n:(k+1)*n], then)
	}
}

// Explain says which rule puts pod a before pod b (or b before a) in this
// ranking, with the values it compared. a and b are looked up by pointer; a
// pod not in the ranking is ranked as if it were appended to it.
func (r *Ranking) Explain(a, b *v1.Pod) Decision {
	r.indexOnce.Do(func() {
		r.index = make(map[*v1.Pod]int, len(r.pods))
		for i, p := range r.pods {
			if _, dup := r.index[p]; !dup {
				r.index[p] = i
			}
		}
	})
	ia, okA := r.index[a]
	ib, okB := r.index[b]
	if okA && okB {
		return r.explain(ia, ib)
	}
	pods := slices.Clone(r.pods)
	if !okA {
		ia = len(pods)
		pods = append(pods, a)
	}
	if !okB {
		ib = len(pods)
		pods = append(pods, b)
	}
	onNode := make(map[string]int)
	for _, p := range r.related {
		if podstate.IsActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	pol := r.pol
	pol.classes = nil
	wider := r.sel.prepare(pods, func(_ int, p *v1.Pod) int { return onNode[p.Spec.NodeName] }, pol)
	return wider.explain(ia, ib)
}
