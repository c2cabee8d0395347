package podranking

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Selector picks the pods to delete on scale-down. It extracts one compact
// key per pod, selects the cheapest diff pods by partial selection and sorts
// only those, so a call costs O(n + diff·log diff) comparisons of small
// structs instead of upstream's O(n·log n) comparisons that each re-parse
// annotations and conditions. Scratch memory is pooled: a call allocates its
// result and a few small values, independent of the number of pods. A
// Selector is safe for concurrent use.
type Selector struct {
	cfg     config
	rankers []Ranker
	pool    sync.Pool
	// sticky is one scratch the Selector keeps across garbage collections,
	// so a controller's steady state allocates nothing but results even for
	// huge ReplicaSets; concurrent callers that find it taken use the pool.
	// It retains about 150 bytes per pod of the largest input seen.
	stickyMu sync.Mutex
	sticky   *scratch
}

type scratch struct {
	keys   []sortKey
	ents   []entry
	scores []int64
	// nodes maps a node name to its slot in counts, the number of active
	// related pods on it; podSlot[i] is filtered pod i's slot + 1 when
	// counting already saw that very pod (0: look its node up).
	nodes   map[string]int
	counts  []int
	podSlot []int32
	class   classScratch
	locked  bool // this is the Selector's sticky scratch, held under stickyMu
}

// NewSelector returns a Selector with upstream's default policy (deletion
// cost and logarithmic scale-down on, the real clock) changed by opts.
func NewSelector(opts ...Option) *Selector {
	s := &Selector{cfg: config{clock: clock.RealClock{}}}
	for _, o := range opts {
		if o != nil {
			o(&s.cfg)
		}
	}
	s.rankers = append(append([]Ranker{}, s.cfg.first...), s.cfg.last...)
	s.pool.New = func() any { return &scratch{nodes: map[string]int{}} }
	return s
}

var defaultSelector = NewSelector()

// PodsToDelete returns the diff pods upstream's ReplicaSet controller would
// delete: filteredPods ranked by related pods on the same node, ordered by the
// rules of ActivePodsWithRanks, first diff taken, in that order. It does not
// reorder filteredPods (upstream sorts the caller's slice in place) and it
// returns a new slice.
//
// Edge cases: diff <= 0 returns nil; diff >= len(filteredPods) returns a copy
// of all pods in input order, unsorted, exactly as upstream skips sorting
// then. Nil entries in filteredPods rank after every real pod; nil entries in
// relatedPods are ignored. Pods that every rule finds equivalent keep their
// input order, where upstream's unstable sort may permute them.
func PodsToDelete(filteredPods, relatedPods []*v1.Pod, diff int) []*v1.Pod {
	return defaultSelector.PodsToDelete(filteredPods, relatedPods, diff)
}

// PodsToDelete is the package-level PodsToDelete with this Selector's policy,
// clock and rankers.
func (s *Selector) PodsToDelete(filteredPods, relatedPods []*v1.Pod, diff int) []*v1.Pod {
	if diff <= 0 {
		return nil
	}
	if diff >= len(filteredPods) {
		return slices.Clone(filteredPods)
	}
	sc := s.acquire()
	defer s.release(sc)
	sc.countOnNodes(relatedPods, filteredPods)
	o := s.prepare(sc, filteredPods, nil, true, s.cfg.policy())
	return o.take(sc.ents, diff)
}

// Order returns all of filteredPods in deletion order (first to delete
// first), ranked by relatedPods as PodsToDelete does. The input is not
// modified.
func (s *Selector) Order(filteredPods, relatedPods []*v1.Pod) []*v1.Pod {
	if len(filteredPods) == 0 {
		return nil
	}
	sc := s.acquire()
	defer s.release(sc)
	sc.countOnNodes(relatedPods, filteredPods)
	o := s.prepare(sc, filteredPods, nil, true, s.cfg.policy())
	return o.sortAll(sc.ents)
}

// Explain says which rule puts pod a before pod b (or b before a) when
// filteredPods are ranked by relatedPods under this Selector's policy. a and b
// are looked up in filteredPods by pointer; a pod not found there is ranked
// as if it were appended to filteredPods.
func (s *Selector) Explain(filteredPods, relatedPods []*v1.Pod, a, b *v1.Pod) Decision {
	pods := filteredPods
	ia, ib := slices.Index(pods, a), slices.Index(pods, b)
	if ia < 0 || ib < 0 || a == nil || b == nil {
		pods = slices.Clone(filteredPods)
		if ia < 0 || a == nil {
			ia = len(pods)
			pods = append(pods, a)
		}
		if ib < 0 || b == nil {
			ib = len(pods)
			pods = append(pods, b)
		}
	}
	sc := s.acquire()
	defer s.release(sc)
	sc.countOnNodes(relatedPods, pods)
	o := s.prepare(sc, pods, nil, true, s.cfg.policy())
	return o.explain(ia, ib)
}

func (s *Selector) acquire() *scratch {
	if s.stickyMu.TryLock() {
		if s.sticky == nil {
			s.sticky = &scratch{nodes: map[string]int{}}
		}
		s.sticky.locked = true
		return s.sticky
	}
	return s.pool.Get().(*scratch)
}

func (s *Selector) release(sc *scratch) {
	// Drop pod pointers so retained scratch does not keep pods alive.
	clear(sc.keys[:cap(sc.keys)])
	clear(sc.nodes)
	if sc.locked {
		sc.locked = false
		s.stickyMu.Unlock()
		return
	}
	s.pool.Put(sc)
}

// countOnNodes counts active related pods per node name, as
// RankByRelatedPodsOnSameNode does, into pooled memory. The ranks themselves
// are read while extracting keys. Callers often pass the same pods as
// filtered and related (a ReplicaSet without siblings), so where
// filtered[i] is related[i] the pod's slot is recorded here and key
// extraction skips a second hash of its node name.
func (sc *scratch) countOnNodes(related, filtered []*v1.Pod) {
	sc.counts = sc.counts[:0]
	sc.podSlot = grow(sc.podSlot, len(filtered))
	clear(sc.podSlot)
	for i, p := range related {
		if !podstate.IsActive(p) {
			continue
		}
		slot, ok := sc.nodes[p.Spec.NodeName]
		if !ok {
			slot = len(sc.counts)
			sc.nodes[p.Spec.NodeName] = slot
			sc.counts = append(sc.counts, 0)
		}
		sc.counts[slot]++
		if i < len(filtered) && filtered[i] == p {
			sc.podSlot[i] = int32(slot + 1)
		}
	}
}

// rankOnNode is the number of active related pods on filtered pod i's node.
func (sc *scratch) rankOnNode(i int, p *v1.Pod) int {
	if s := sc.podSlot[i]; s > 0 {
		return sc.counts[s-1]
	}
	if slot, ok := sc.nodes[p.Spec.NodeName]; ok {
		return sc.counts[slot]
	}
	return 0
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// prepare extracts the keys and runs the extension rankers. Ranks come from
// the node counts of countOnNodes when byNode is set, else from ranks, which
// may be shorter than pods: missing entries read as 0.
func (s *Selector) prepare(sc *scratch, pods []*v1.Pod, ranks []int, byNode bool, pol policy) *order {
	n := len(pods)
	sc.keys = grow(sc.keys, n)
	sc.ents = grow(sc.ents, n)
	for i, p := range pods {
		r := 0
		switch {
		case p == nil:
		case byNode:
			r = sc.rankOnNode(i, p)
		case i < len(ranks):
			r = ranks[i]
		}
		pol.makeKey(&sc.keys[i], p, r, i)
	}
	// Classes depend on the whole set, so they come after every key and
	// before the entries, whose fast field packs the rule-6 class.
	sc.class.assignClasses(sc.keys, &pol)
	for i := range sc.keys {
		k := &sc.keys[i]
		sc.ents[i] = entry{head: k.head, rank: int64(k.rank), fast: fastReady(k, &pol), idx: int32(i)}
	}
	o := &order{pol: pol, keys: sc.keys, pods: pods, rankers: s.rankers, nFirst: len(s.cfg.first), slow: len(s.cfg.first) > 0}
	if len(s.rankers) > 0 {
		sc.scores = grow(sc.scores, n*len(s.rankers))
		o.scores = sc.scores
		o.score()
	}
	return o
}

// take moves the k first pods to the front of idx, sorts just those and
// returns them as pods.
func (o *order) take(ents []entry, k int) []*v1.Pod {
	o.selectK(ents, k)
	slices.SortFunc(ents[:k], o.cmp)
	out := make([]*v1.Pod, k)
	for i, e := range ents[:k] {
		out[i] = o.keys[e.idx].pod
	}
	return out
}

func (o *order) sortAll(ents []entry) []*v1.Pod {
	slices.SortFunc(ents, o.cmp)
	out := make([]*v1.Pod, len(ents))
	for i, e := range ents {
		out[i] = o.keys[e.idx].pod
	}
	return out
}
