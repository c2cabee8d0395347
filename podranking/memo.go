package podranking

import (
	"github.com/ctrlkit/ctrlkit/internal/partialsort"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// Memo keeps what ranking reads from each pod object, by pointer, for a
// caller that ranks mostly the same objects again: a controller whose
// owner scales down sync after sync over pods from an informer's cache.
// Reading a pod that is not in the processor's caches is most of a
// ranking's cost, and an informer never changes an object it has handed
// out (an update replaces it with a new one), so an unchanged pointer has
// unchanged facts. Only what comes from the pod itself is kept; the
// reference time, the policy and the counts of related pods are applied
// anew by every ranking, which therefore decides exactly as one without a
// memo. Pods must not be modified in place while a Memo knows them.
//
// A Memo holds the pods it knows, so none of them can be freed and its
// address reused by another pod while the memo could answer for it; each
// ranking drops the pods it did not meet. It is not safe for concurrent
// use: give each owner its own.
type Memo struct {
	facts map[*v1.Pod]*memoFacts
	nodes map[string]int32 // node name -> id, for podFacts.node
	slots []int32          // a ranking's slot per node id, -1 for none
	// epoch numbers the rankings; met counts the pods the current one
	// has met, each once.
	epoch uint32
	met   int
	// spare is where the facts of new pods are taken from, a block at a
	// time, rather than one allocation per pod.
	spare []memoFacts
}

// memoFacts are a pod's facts and the last ranking that met the pod.
type memoFacts struct {
	podFacts
	epoch uint32
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo {
	return &Memo{facts: map[*v1.Pod]*memoFacts{}, nodes: map[string]int32{}}
}

// of returns the facts of pod, which must not be nil, reading the pod only
// the first time it is met.
func (m *Memo) of(pod *v1.Pod) *podFacts {
	f, ok := m.facts[pod]
	if !ok {
		if len(m.spare) == 0 {
			// Blocks grow with the memo, so that a small owner's memo
			// stays small and a large one's takes few allocations.
			m.spare = make([]memoFacts, min(max(len(m.facts)/2, 16), 256))
		}
		f, m.spare = &m.spare[0], m.spare[1:]
		f.read(pod, true)
		f.active = podstate.IsActive(pod)
		id, ok := m.nodes[pod.Spec.NodeName]
		if !ok {
			id = int32(len(m.nodes))
			m.nodes[pod.Spec.NodeName] = id
		}
		f.node = id
		m.facts[pod] = f
	}
	if f.epoch != m.epoch {
		f.epoch = m.epoch
		m.met++
	}
	return &f.podFacts
}

// begin starts a ranking.
func (m *Memo) begin() {
	m.epoch++
	m.met = 0
}

// end drops the pods the ranking did not meet, when there are any.
func (m *Memo) end() {
	if len(m.facts) == m.met {
		return
	}
	kept := make(map[*v1.Pod]*memoFacts, m.met)
	for p, f := range m.facts {
		if f.epoch == m.epoch {
			kept[p] = f
		}
	}
	m.facts = kept
	// Node ids are never reused while facts hold them; the names of nodes
	// no pod is on any more are dropped with every fact once they pile up.
	if len(m.nodes) > 2*len(kept)+1024 {
		m.facts, m.nodes = map[*v1.Pod]*memoFacts{}, map[string]int32{}
	}
}

// rankMemo is rank with the facts of the pods from m: each node of a pod of
// filtered gets a slot, each pod's key holds its slot until the active
// related pods on its node are counted, as countOnNodes counts them.
func (s *Selector) rankMemo(m *Memo, filtered, related []*v1.Pod, pol policy, keys []key, order []partialsort.Entry) *Ranking {
	r := &Ranking{pods: filtered, related: related, sel: s, pol: pol, keys: keys}
	if cap(m.slots) < len(m.nodes) {
		m.slots = make([]int32, len(m.nodes), 2*len(m.nodes))
	}
	slots := m.slots[:len(m.nodes)]
	for i := range slots {
		slots[i] = -1
	}
	var counts []int
	shared := 0
	if len(filtered) > 0 && len(related) >= len(filtered) && &filtered[0] == &related[0] {
		shared = len(filtered)
	}
	m.begin()
	for i, p := range filtered {
		if p == nil {
			r.pol.nilKey(&keys[i], i)
			continue
		}
		f := m.of(p)
		for int(f.node) >= len(slots) {
			// A node first met in this ranking.
			slots = append(slots, -1)
		}
		slot := slots[f.node]
		if slot < 0 {
			slot = int32(len(counts))
			slots[f.node] = slot
			counts = append(counts, 0)
		}
		if i < shared && f.active {
			counts[slot]++
		}
		r.pol.keyFromFacts(&keys[i], p, f, int(slot), i)
	}
	for _, p := range related[shared:] {
		if p == nil {
			continue
		}
		if f := m.of(p); f.active && int(f.node) < len(slots) {
			if slot := slots[f.node]; slot >= 0 {
				counts[slot]++
			}
		}
	}
	for i := range keys {
		if keys[i].pod != nil {
			keys[i].rank = counts[keys[i].rank]
		}
	}
	m.slots = slots
	m.end()
	s.finish(r, order)
	return r
}

// PodsToDeleteMemo is PodsToDelete with the pods' facts kept in m from one
// call to the next: the same pods, for every input, as without it. A nil m
// keeps nothing.
func (s *Selector) PodsToDeleteMemo(m *Memo, filteredPods, relatedPods []*v1.Pod, diff int) []*v1.Pod {
	if diff <= 0 {
		return nil
	}
	if diff >= len(filteredPods) {
		return slices.Clone(filteredPods)
	}
	b := getBuffers(len(filteredPods))
	defer putBuffers(b)
	var r *Ranking
	if m == nil {
		r = s.rank(filteredPods, relatedPods, s.cfg.policy(), b.keys, b.order)
	} else {
		r = s.rankMemo(m, filteredPods, relatedPods, s.cfg.policy(), b.keys, b.order)
	}
	r.sortTo(diff)
	return r.first(diff)
}

// RankMemo is Rank with the pods' facts kept in m from one call to the
// next.
func (s *Selector) RankMemo(m *Memo, filteredPods, relatedPods []*v1.Pod) *Ranking {
	n := len(filteredPods)
	return s.rankMemo(m, filteredPods, relatedPods, s.cfg.policy(), make([]key, n), make([]partialsort.Entry, n))
}
