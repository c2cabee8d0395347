package podset

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// ScaleDownDecision describes one scale-down: which pods the controller chose
// among how many, and for each the rule that put it before the first pod kept.
type ScaleDownDecision struct {
	// Kind, Namespace and Name identify the owner.
	Kind, Namespace, Name string
	// Candidates is the number of active pods the owner had.
	Candidates int
	// Chosen are the pods being deleted, first choice first.
	Chosen []*v1.Pod
	// Reasons[i] explains why Chosen[i] went before the first pod kept. It is
	// empty when every pod goes, as there is no choice to explain then. A
	// pod chosen because the Kind named it (ScaleInKind), or a deletion
	// gate marked it, before a pod kept that is neither has Rule
	// podranking.RuleNamed.
	Reasons []podranking.Decision
}

// ScaleDownFunc receives scale-down decisions; see WithScaleDownReporter.
type ScaleDownFunc func(ScaleDownDecision)

// Victims chooses the n pods a scale-down deletes as upstream does: every
// pod when n covers them all, otherwise by upstream's ranking, which
// prefers pods on nodes that run many of the related owners' pods
// (SiblingLister), and the pods a ScaleInKind names, or a deletion gate
// marked, before any other.
func (s podSpec[O]) Victims(owner O, active []*v1.Pod, _ []childset.Traits, n int) []*v1.Pod {
	if n >= len(active) {
		// Every pod goes: upstream does not sort then, and neither do we;
		// the related pods are not read.
		victims := slices.Clone(active)
		s.report(nil, owner, active, victims)
		return victims
	}
	related, err := s.relatedPods(owner)
	if err != nil {
		// Ranking without siblings is still a valid choice, only a less
		// spread one.
		s.logger.V(4).Info("No related pods for ranking", "owner", cache.MetaObjectToName(owner), "reason", err.Error())
	}
	sel := podranking.NewSelector(s.rankingOptions()...)
	if named, others := s.namedToDeleteFirst(owner, active); len(named) > 0 {
		return s.namedFirst(sel, owner, active, named, others, related, n)
	}
	// The pods' facts are kept for the owner's next scale-down, which
	// usually meets most of the same pod objects.
	memo := s.rankingMemo(owner)
	var victims []*v1.Pod
	if s.cfg.onScaleDown == nil {
		// The choice alone: PodsToDelete ranks in memory it reuses from
		// one scale-down to the next.
		victims = sel.PodsToDeleteMemo(memo, active, related, n)
		s.observeDeletionAgeRatio(active, victims)
		return victims
	}
	// One ranking serves the choice, the metric and the report.
	rk := sel.RankMemo(memo, active, related)
	victims = rk.PodsToDelete(n)
	s.observeDeletionAgeRatio(active, victims)
	s.report(rk, owner, active, victims)
	return victims
}

// rankingMemo returns the owner's ranking memo, made if needed.
func (s podSpec[O]) rankingMemo(owner O) *podranking.Memo {
	uid := owner.GetUID()
	r := s.rankings.Get(cache.MetaObjectToName(owner).String(), func(r *ownerRanking) bool { return r.uid == uid },
		func() *ownerRanking { return &ownerRanking{uid: uid, memo: podranking.NewMemo()} })
	return r.memo
}

// rankingOptions reads the ranking gate for this sync. Logarithmic
// scale-down is always on, as in upstream v1.37, which removed its gate: a
// v1.37 registry panics when asked about it, so it is never asked.
func (s podSpec[O]) rankingOptions() []podranking.Option {
	opts := []podranking.Option{podranking.WithClock(s.cfg.clock)}
	if !s.cfg.gates(PodDeletionCost) {
		opts = append(opts, podranking.WithoutDeletionCost())
	}
	return opts
}

// relatedPods returns the pods of every sibling owner (the owner
// included), active or not, each once, listed as upstream lists them
// (getIndirectlyRelatedPods): those each sibling's selector matches in its
// namespace. Without a SiblingLister, or for an owner without a
// controller, there are none, as upstream finds no related pods then.
func (s podSpec[O]) relatedPods(owner O) ([]*v1.Pod, error) {
	if s.siblings == nil {
		return nil, nil
	}
	siblings, err := s.siblings.Siblings(owner)
	if err != nil {
		return nil, err
	}
	// Pods are told apart by UID, as upstream does, also within one
	// listing. The set is sized by the first listing, usually the owner's
	// own pods and most of the total, so it is not rebuilt as it grows.
	var seen map[types.UID]struct{}
	var out []*v1.Pod
	for _, sibling := range siblings {
		selector, err := s.kind.Selector(sibling)
		if err != nil {
			continue
		}
		pods, err := s.podsMatching(sibling.GetNamespace(), selector)
		if err != nil {
			return nil, fmt.Errorf("listing pods of %s/%s: %w", sibling.GetNamespace(), sibling.GetName(), err)
		}
		if len(pods) == 0 {
			continue
		}
		if seen == nil {
			seen = make(map[types.UID]struct{}, len(pods))
			out = make([]*v1.Pod, 0, len(pods))
		}
		for _, pod := range pods {
			if _, dup := seen[pod.UID]; !dup {
				seen[pod.UID] = struct{}{}
				out = append(out, pod)
			}
		}
	}
	return out, nil
}

// namedToDeleteFirst splits active into the pods to delete first and the
// others, each in input order: the pods the Kind names (ScaleInKind) and,
// under a deletion gate, the pods already marked for deletion, so that a
// scale-down the gate holds chooses them again rather than marking others
// the ranking now puts first. named is empty when there are none.
func (s podSpec[O]) namedToDeleteFirst(owner O, active []*v1.Pod) (named, others []*v1.Pod) {
	var wanted map[string]bool
	if s.scaleIn != nil {
		names := s.scaleIn.ChildrenToDeleteFirst(owner)
		wanted = make(map[string]bool, len(names))
		for _, name := range names {
			wanted[name] = true
		}
	}
	gated := s.DeletionGate(owner).Label != ""
	if len(wanted) == 0 && !gated {
		return nil, nil
	}
	for _, pod := range active {
		_, marked := pod.Annotations[childset.DeletionRequestedAnnotation]
		if wanted[pod.Name] || (gated && marked) {
			named = append(named, pod)
		} else {
			others = append(others, pod)
		}
	}
	if len(named) == 0 {
		return nil, nil
	}
	return named, others
}

// namedFirst chooses n of the owner's active pods, n fewer than them: the
// named ones first, ranked among themselves, then the others by the
// ranking. A named pod chosen before an unnamed survivor is explained by
// podranking.RuleNamed.
func (s podSpec[O]) namedFirst(sel *podranking.Selector, owner O, active, named, others, related []*v1.Pod, n int) []*v1.Pod {
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
	s.observeDeletionAgeRatio(active, victims)
	if s.cfg.onScaleDown == nil {
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
	d := s.decision(owner, active, victims)
	d.Reasons = make([]podranking.Decision, len(victims))
	for i, v := range victims {
		if i < k && survivorRank == othersRank {
			d.Reasons[i] = podranking.Decision{A: podstate.Key(v), B: podstate.Key(survivor),
				Rule: podranking.RuleNamed, Order: -1, AValue: "named", BValue: "not named"}
			continue
		}
		d.Reasons[i] = survivorRank.Explain(v, survivor)
	}
	s.cfg.onScaleDown(d)
	return victims
}

func (s podSpec[O]) decision(owner O, active, victims []*v1.Pod) ScaleDownDecision {
	return ScaleDownDecision{Kind: s.gvk.Kind, Namespace: owner.GetNamespace(), Name: owner.GetName(),
		Candidates: len(active), Chosen: victims}
}

// report explains each victim against the first survivor, the pod that
// would have gone next, to the WithScaleDownReporter function.
func (s podSpec[O]) report(rk *podranking.Ranking, owner O, active, victims []*v1.Pod) {
	if s.cfg.onScaleDown == nil {
		return
	}
	d := s.decision(owner, active, victims)
	if rk != nil && len(victims) < len(active) {
		survivor := rk.At(len(victims)) // sorts one position more, not all
		for _, v := range victims {
			d.Reasons = append(d.Reasons, rk.Explain(v, survivor))
		}
	}
	s.cfg.onScaleDown(d)
}

// observeDeletionAgeRatio reports the age of each Ready victim relative to
// the youngest Ready candidate, as upstream does after sorting. Upstream
// divides whole milliseconds as integers, which truncates the ratio and
// panics when the youngest Ready pod is less than a millisecond old; here the
// ratio is a float and nothing is observed when the youngest age is not
// positive.
func (s podSpec[O]) observeDeletionAgeRatio(candidates, victims []*v1.Pod) {
	if s.cfg.syncMetrics == nil {
		return
	}
	var youngest time.Time
	for _, pod := range candidates {
		if t := pod.CreationTimestamp.Time; t.After(youngest) && podstate.IsReady(pod) {
			youngest = t
		}
	}
	now := s.cfg.clock.Now()
	youngestAge := now.Sub(youngest)
	if youngest.IsZero() || youngestAge <= 0 {
		return
	}
	for _, pod := range victims {
		if !podstate.IsReady(pod) {
			continue
		}
		s.cfg.syncMetrics.ObserveDeletionAgeRatio(float64(now.Sub(pod.CreationTimestamp.Time)) / float64(youngestAge))
	}
}
