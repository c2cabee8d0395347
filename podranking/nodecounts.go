package podranking

import (
	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podstate"
)

// countOnNodes is rule 5's input, upstream's
// getPodsRankedByRelatedPodsOnSameNode, with one map lookup per pod (two
// for the first pod of each node). Each node of a pod of filtered gets a
// slot; visit sees every pod of filtered with its node's slot (-1 for a nil
// pod), and the returned counts hold, per slot, the active pods of related
// on that node. Related pods on nodes without a pod of filtered are never
// stored. When filtered is a prefix of related, as when a set of pods is
// ranked among itself, its pods are counted as they are visited rather than
// looked up a second time.
func countOnNodes(filtered, related []*v1.Pod, visit func(i int, p *v1.Pod, slot int32)) []int {
	slots := make(map[string]int32)
	counts := make([]int, 0, min(len(filtered), 64))
	shared := 0
	if len(filtered) > 0 && len(related) >= len(filtered) && &filtered[0] == &related[0] {
		shared = len(filtered)
	}
	for i, p := range filtered {
		slot := int32(-1)
		if p != nil {
			s, ok := slots[p.Spec.NodeName]
			if !ok {
				s = int32(len(counts))
				slots[p.Spec.NodeName] = s
				counts = append(counts, 0)
			}
			if i < shared && podstate.IsActive(p) {
				counts[s]++
			}
			slot = s
		}
		visit(i, p, slot)
	}
	for _, p := range related[shared:] {
		if podstate.IsActive(p) {
			if s, ok := slots[p.Spec.NodeName]; ok {
				counts[s]++
			}
		}
	}
	return counts
}
