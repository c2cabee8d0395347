package podranking

import (
	"cmp"
	"fmt"
	"github.com/ctrlkit/ctrlkit/internal/partialsort"
	"slices"
	"sort" //nolint:depguard // upstream's answer is what sort.Sort makes of its Less and Swap, so only sort.Sort itself reproduces it
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Ranking is one prepared ranking of pods: a key per pod, extracted once,
// and a deletion order sorted lazily, only as far as the positions asked
// for so far (the pods to delete, the first survivor). The choice of pods to
// delete and the explanations of that choice read the same Ranking, so
// explaining every victim costs no further sorting. A Ranking is safe for
// concurrent use; it never modifies the pods or the slice it was given.
type Ranking struct {
	pods    []*v1.Pod // as given, in input order
	related []*v1.Pod
	sel     *Selector
	pol     policy
	keys    []key   // keys[i] is pods[i]'s
	scores  []int64 // ranker r's score of input position i is scores[r*n+i]

	mu sync.Mutex
	// sorter.Order holds input positions in deletion order; its first
	// sorted positions are final.
	sorter partialsort.Sorter
	sorted int

	indexOnce sync.Once
	index     map[*v1.Pod]int // pod -> input position
}

// Rank prepares filteredPods for deletion, each ranked by the number of
// active pods of relatedPods on its node (upstream's
// getPodsRankedByRelatedPodsOnSameNode), at the Selector's current time. The
// deletion order is sorted on demand, as far as PodsToDelete, At or Order
// need it.
func (s *Selector) Rank(filteredPods, relatedPods []*v1.Pod) *Ranking {
	n := len(filteredPods)
	return s.rank(filteredPods, relatedPods, s.cfg.policy(), make([]key, n), make([]partialsort.Entry, n))
}

// rank extracts the keys of filteredPods into keys, unsorted. A key's rank
// holds its node's slot until the related pods are counted.
func (s *Selector) rank(filteredPods, relatedPods []*v1.Pod, pol policy, keys []key, order []partialsort.Entry) *Ranking {
	r := &Ranking{pods: filteredPods, related: relatedPods, sel: s, pol: pol, keys: keys}
	counts := countOnNodes(filteredPods, relatedPods, func(i int, p *v1.Pod, slot int32) {
		r.pol.makeKey(&keys[i], p, int(slot), i)
	})
	for i := range keys {
		if keys[i].pod != nil {
			keys[i].rank = counts[keys[i].rank]
		}
	}
	s.finish(r, order)
	return r
}

// rankBuffers is the memory of a ranking that does not outlive the call
// that made it (Selector.PodsToDelete, Order, Select, Sorted): the keys for
// thousands of pods are large, and fresh memory costs a fifth of a ranking.
type rankBuffers struct {
	keys  []key
	order []partialsort.Entry
}

var bufferPool sync.Pool

func getBuffers(n int) *rankBuffers {
	if b, ok := bufferPool.Get().(*rankBuffers); ok && cap(b.keys) >= n && cap(b.order) >= n {
		b.keys, b.order = b.keys[:n], b.order[:n]
		return b
	}
	return &rankBuffers{keys: make([]key, n), order: make([]partialsort.Entry, n)}
}

func putBuffers(b *rankBuffers) {
	clear(b.keys) // drop the pod pointers
	bufferPool.Put(b)
}

// prepare extracts the keys into keys with the ranks rankOf gives, and
// finishes the ranking.
func (s *Selector) prepare(pods []*v1.Pod, rankOf func(i int, p *v1.Pod) int, pol policy, keys []key, order []partialsort.Entry) *Ranking {
	r := &Ranking{pods: pods, sel: s, pol: pol, keys: keys}
	for i, p := range pods {
		rank := 0
		if p != nil {
			rank = rankOf(i, p)
		}
		r.pol.makeKey(&r.keys[i], p, rank, i)
	}
	s.finish(r, order)
	return r
}

// finish assigns instant classes when the policy asks for them, runs the
// extension rankers, and fills order, when not nil, with the input order,
// ready to be sorted.
func (s *Selector) finish(r *Ranking, order []partialsort.Entry) {
	if r.pol.consistentTies && r.pol.logScale {
		// The classes group the creation times of every pod.
		for i := range r.keys {
			r.pol.createdOf(&r.keys[i])
		}
		r.pol.classes = assignClasses(r.keys)
	}
	if len(s.rankers) > 0 {
		r.scores = make([]int64, len(r.pods)*len(s.rankers))
		r.score()
	}
	for i := range order {
		order[i] = entryOf(&r.keys[i], i)
	}
	r.sorter = partialsort.Sorter{Order: order, Tie: r.tie}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sortTo(diff)
	return r.first(diff)
}

// Order returns every pod in deletion order, first to delete first.
func (r *Ranking) Order() []*v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sortTo(len(r.pods))
	return r.first(len(r.pods))
}

// At returns the pod at position i of the deletion order (Order()[i]),
// sorting only the first i+1 positions: At(diff) is the pod a scale-down of
// diff pods keeps first. It panics if i is not in [0, Len).
func (r *Ranking) At(i int) *v1.Pod {
	if i < 0 || i >= len(r.pods) {
		panic(fmt.Sprintf("podranking: Ranking.At: position %d out of range [0, %d)", i, len(r.pods)))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sortTo(i + 1)
	return r.keys[r.sorter.Order[i].Pos].pod
}

func (r *Ranking) first(n int) []*v1.Pod {
	if n == 0 {
		return nil
	}
	out := make([]*v1.Pod, n)
	for i, e := range r.sorter.Order[:n] {
		out[i] = r.keys[e.Pos].pod
	}
	return out
}

// sortTo makes the first m positions of the deletion order final; the
// caller holds mu or owns r. For upstream's relation it is partialsort.Sorter,
// which makes exactly sort.Sort's decisions for those positions over keys
// whose Less is upstream's Less: sort.Sort on upstream's
// ActivePodsWithRanks makes the same calls with the same answers, so the
// first m pods are upstream's, also where the relation is cyclic or pods
// are equivalent. With extension rankers it is sort.Sort itself, over the
// whole order. The instant class order is a strict weak order; there,
// equivalent pods keep their input order.
func (r *Ranking) sortTo(m int) {
	if m <= r.sorted {
		return
	}
	order := r.sorter.Order
	switch {
	case r.pol.consistentTies:
		slices.SortFunc(order, func(a, b partialsort.Entry) int {
			if c := r.compare(&r.keys[a.Pos], &r.keys[b.Pos]); c != 0 {
				return c
			}
			return cmp.Compare(a.Pos, b.Pos)
		})
		r.sorted = len(order)
	case len(r.sel.rankers) == 0:
		r.sorter.SortPrefix(m)
		r.sorted = m
	default:
		sort.Sort(byStages{r})
		r.sorted = len(order)
	}
}

// byStages sorts the order by the rankers and the built-in rules.
type byStages struct{ r *Ranking }

func (s byStages) Len() int { return len(s.r.sorter.Order) }
func (s byStages) Swap(i, j int) {
	o := s.r.sorter.Order
	o[i], o[j] = o[j], o[i]
}
func (s byStages) Less(i, j int) bool {
	o := s.r.sorter.Order
	return s.r.compare(&s.r.keys[o[i].Pos], &s.r.keys[o[j].Pos]) < 0
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
// while the keys are extracted; keys[i] is always input position i.
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
		// Comparing may read restart counts into the keys, which a
		// concurrent sort reads too.
		r.mu.Lock()
		defer r.mu.Unlock()
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
	pol := r.pol
	pol.classes = nil
	wider := r.sel.rank(pods, r.related, pol, make([]key, len(pods)), nil)
	return wider.explain(&wider.keys[ia], &wider.keys[ib])
}
