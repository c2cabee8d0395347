package podranking

import (
	"cmp"
	"slices"
	"sort" //nolint:depguard // upstream's answer is what sort.Sort makes of its Less and Swap, so only sort.Sort itself reproduces it
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Ranking is one prepared ranking of pods: a key per pod, extracted once,
// sorted once into deletion order. The choice of pods to delete and the
// explanations of that choice read the same Ranking, so explaining every
// victim costs no further sorting. A Ranking is safe for concurrent use; it
// never modifies the pods or the slice it was given.
type Ranking struct {
	pods    []*v1.Pod // as given, in input order
	related []*v1.Pod
	sel     *Selector
	pol     policy
	keys    []key   // in deletion order once sorted
	scores  []int64 // ranker r's score of input position i is scores[r*n+i]

	indexOnce sync.Once
	index     map[*v1.Pod]int // pod -> position in keys
}

// Rank prepares filteredPods for deletion, each ranked by the number of
// active pods of relatedPods on its node (upstream's
// getPodsRankedByRelatedPodsOnSameNode), at the Selector's current time, and
// sorts them into deletion order.
func (s *Selector) Rank(filteredPods, relatedPods []*v1.Pod) *Ranking {
	r := s.rank(filteredPods, relatedPods, make([]key, len(filteredPods)))
	r.sortKeys()
	return r
}

// rank extracts the keys of filteredPods into buf, unsorted.
func (s *Selector) rank(filteredPods, relatedPods []*v1.Pod, buf []key) *Ranking {
	onNode := nodeCounts(relatedPods)
	r := s.prepare(filteredPods, func(_ int, p *v1.Pod) int { return onNode[p.Spec.NodeName] }, s.cfg.policy(), buf)
	r.related = relatedPods
	return r
}

// nodeCounts counts the active pods per node name.
func nodeCounts(pods []*v1.Pod) map[string]int {
	onNode := make(map[string]int)
	for _, p := range pods {
		if podstate.IsActive(p) {
			onNode[p.Spec.NodeName]++
		}
	}
	return onNode
}

// keyBuffers recycles the keys of rankings that do not outlive the call
// that made them (Selector.PodsToDelete and Order): a key slice for
// thousands of pods is large, and fresh memory costs a fifth of a ranking.
var keyBuffers sync.Pool

func getKeys(n int) []key {
	if b, ok := keyBuffers.Get().(*[]key); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]key, n)
}

func putKeys(keys []key) {
	clear(keys) // drop the pod pointers
	keyBuffers.Put(&keys)
}

// prepare extracts the keys into buf, assigns instant classes when the
// policy asks for them, and runs the extension rankers.
func (s *Selector) prepare(pods []*v1.Pod, rankOf func(i int, p *v1.Pod) int, pol policy, buf []key) *Ranking {
	r := &Ranking{pods: pods, sel: s, pol: pol, keys: buf}
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
	return r.first(diff)
}

// Order returns every pod in deletion order, first to delete first.
func (r *Ranking) Order() []*v1.Pod { return r.first(len(r.pods)) }

func (r *Ranking) first(n int) []*v1.Pod {
	if n == 0 {
		return nil
	}
	out := make([]*v1.Pod, n)
	for i := range out {
		out[i] = r.keys[i].pod
	}
	return out
}

// sortKeys puts the keys in deletion order. For upstream's relation it is
// Go's own sort.Sort, over keys whose Less is upstream's Less and whose Swap
// moves a pod and its rank together as upstream's Swap does: sort.Sort then
// makes the same calls with the same answers as on upstream's
// ActivePodsWithRanks, so it leaves the same order, also where the relation
// is cyclic or pods are equivalent. The instant class order is a strict weak
// order; there, equivalent pods keep their input order.
func (r *Ranking) sortKeys() {
	switch {
	case r.pol.consistentTies:
		slices.SortFunc(r.keys, func(a, b key) int {
			if c := r.compare(&a, &b); c != 0 {
				return c
			}
			return cmp.Compare(a.idx, b.idx)
		})
	case len(r.sel.rankers) == 0:
		sort.Sort(byRules{keys: r.keys, pol: &r.pol})
	default:
		sort.Sort(byStages{r})
	}
}

// byRules sorts keys by the built-in rules alone.
type byRules struct {
	keys []key
	pol  *policy
}

func (s byRules) Len() int      { return len(s.keys) }
func (s byRules) Swap(i, j int) { s.keys[i], s.keys[j] = s.keys[j], s.keys[i] }
func (s byRules) Less(i, j int) bool {
	a, b := &s.keys[i], &s.keys[j]
	// Rules 1 to 5 settle most pairs; test them before the call.
	if a.head != b.head {
		return a.head < b.head
	}
	if a.head&headNilBit != 0 {
		return false // two nil pods are equivalent; their keys hold no times
	}
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	_, c := s.pol.compareTimesAndRestarts(a, b)
	return c < 0
}

// byStages sorts keys by the rankers and the built-in rules.
type byStages struct{ r *Ranking }

func (s byStages) Len() int      { return len(s.r.keys) }
func (s byStages) Swap(i, j int) { s.r.keys[i], s.r.keys[j] = s.r.keys[j], s.r.keys[i] }
func (s byStages) Less(i, j int) bool {
	return s.r.compare(&s.r.keys[i], &s.r.keys[j]) < 0
}

// compare orders two keys by every stage.
func (r *Ranking) compare(a, b *key) int {
	_, _, c := r.compareFrom(0, a, b)
	return c
}

// compareFrom compares two keys starting at stage; stages 0..nFirst-1 are
// the leading rankers, stage nFirst is the built-in rule set and the stages
// after it are the trailing rankers. It returns the deciding rule, the
// ranker index when an extension decided (else -1) and the sign.
func (r *Ranking) compareFrom(stage int, a, b *key) (Rule, int, int) {
	n, nFirst := len(r.pods), len(r.sel.cfg.first)
	for s := stage; s <= len(r.sel.rankers); s++ {
		if s == nFirst {
			if rule, c := r.pol.compare(a, b); c != 0 {
				return rule, -1, c
			}
			continue
		}
		k := s
		if s > nFirst {
			k = s - 1
		}
		if c := cmp.Compare(r.scores[k*n+int(a.idx)], r.scores[k*n+int(b.idx)]); c != 0 {
			return RuleExtension, k, c
		}
	}
	return RuleNone, -1, 0
}

// score runs the rankers back to front, so that the then-comparator handed to
// each one can already read the scores of every ranker after it. It runs
// before sorting, while keys[i] is input position i.
func (r *Ranking) score() {
	n, nFirst := len(r.pods), len(r.sel.cfg.first)
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
			_, _, c := r.compareFrom(next, &r.keys[i], &r.keys[j])
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
		r.index = make(map[*v1.Pod]int, len(r.keys))
		for i := range r.keys {
			if _, dup := r.index[r.keys[i].pod]; !dup {
				r.index[r.keys[i].pod] = i
			}
		}
	})
	ia, okA := r.index[a]
	ib, okB := r.index[b]
	if okA && okB {
		return r.explain(&r.keys[ia], &r.keys[ib])
	}
	pods := slices.Clone(r.pods)
	ia, ib = slices.Index(pods, a), slices.Index(pods, b)
	if !okA {
		ia = len(pods)
		pods = append(pods, a)
	}
	if !okB {
		ib = len(pods)
		pods = append(pods, b)
	}
	onNode := nodeCounts(r.related)
	pol := r.pol
	pol.classes = nil
	wider := r.sel.prepare(pods, func(_ int, p *v1.Pod) int { return onNode[p.Spec.NodeName] }, pol, make([]key, len(pods)))
	return wider.explain(&wider.keys[ia], &wider.keys[ib])
}
