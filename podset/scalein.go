package podset

import (
	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// namedToDeleteFirst splits active into the pods the Kind names to delete
// first and the others, each in input order. named is empty when the Kind
// is no ScaleInKind or names no active pod.
func (c *Reconciler[O]) namedToDeleteFirst(o O, active []*v1.Pod) (named, others []*v1.Pod) {
	if c.scaleIn == nil {
		return nil, nil
	}
	names := c.scaleIn.ChildrenToDeleteFirst(o)
	if len(names) == 0 {
		return nil, nil
	}
	wanted := make(map[string]bool, len(names))
	for _, name := range names {
		wanted[name] = true
	}
	for _, pod := range active {
		if wanted[pod.Name] {
			named = append(named, pod)
		} else {
			others = append(others, pod)
		}
	}
	return named, others
}

// podsToDeleteNamedFirst chooses n of the owner's active pods, n fewer
// than them: the named ones first, ranked among themselves, then the
// others by the ranking. It reports the choice when a reporter is set; a
// named pod chosen before an unnamed survivor is explained by
// podranking.RuleNamed.
func (c *Reconciler[O]) podsToDeleteNamedFirst(sel *podranking.Selector, o O, active, named, others, related []*v1.Pod, n int) []*v1.Pod {
	namedRank := sel.Rank(named, related)
	k := min(n, len(named))
	var victims []*v1.Pod
	if k < len(named) {
		victims = namedRank.PodsToDelete(k)
	} else {
		// Every named pod goes; sorted, the report lists them in order.
		victims = namedRank.Order()
	}
	othersRank := sel.Rank(others, related)
	victims = append(victims, othersRank.PodsToDelete(n-k)...)
	c.observeDeletionAgeRatio(active, victims)
	if c.cfg.onScaleDown == nil {
		return victims
	}
	// The first pod kept is the next named one or, as n < len(active),
	// the first other pod kept.
	survivorRank, survivor := othersRank, (*v1.Pod)(nil)
	if k < len(named) {
		survivorRank, survivor = namedRank, namedRank.At(k)
	} else {
		survivor = othersRank.At(n - k)
	}
	d := ScaleDownDecision{Kind: c.gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName(),
		Candidates: len(active), Chosen: victims, Reasons: make([]podranking.Decision, len(victims))}
	for i, v := range victims {
		if i < k && survivorRank == othersRank {
			d.Reasons[i] = podranking.Decision{A: podstate.Key(v), B: podstate.Key(survivor),
				Rule: podranking.RuleNamed, Order: -1, AValue: "named", BValue: "not named"}
			continue
		}
		d.Reasons[i] = survivorRank.Explain(v, survivor)
	}
	c.cfg.onScaleDown(d)
	return victims
}
