package podset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/internal/unsure"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
	"github.com/ctrlkit/ctrlkit/slowstart"
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
	// pod chosen because the Kind named it (ScaleInKind) before an unnamed
	// pod kept has Rule podranking.RuleNamed.
	Reasons []podranking.Decision
}

// ScaleDownFunc receives scale-down decisions; see WithScaleDownReporter.
type ScaleDownFunc func(ScaleDownDecision)

// desired is the owner's desired count, never negative.
func (c *Reconciler[O]) desired(o O) int { return int(max(c.kind.Replicas(o), 0)) }

// manageReplicas creates or deletes at most burst pods to move the active
// count towards the desired count. Expectations are raised before the first
// API call, so the pods' own events can never arrive ahead of them.
func (c *Reconciler[O]) manageReplicas(ctx context.Context, o O, expKey string, own ownListing) error {
	active := own.active
	diff := len(active) - c.desired(o)
	switch {
	case diff < 0:
		return c.createPods(ctx, o, expKey, min(-diff, c.cfg.burst))
	case diff > 0:
		return c.deletePods(ctx, o, expKey, own, min(diff, c.cfg.burst))
	}
	return nil
}

func (c *Reconciler[O]) createPods(ctx context.Context, o O, expKey string, n int) error {
	logger := klog.FromContext(ctx)
	if err := c.expectations.ExpectCreations(expKey, n); err != nil {
		return fmt.Errorf("recording %d expected creations: %w", n, err)
	}
	logger.V(2).Info("Too few replicas", "kind", c.gvk.Kind, "owner", klog.KObj(o), "need", c.desired(o), "creating", n)
	ref := metav1.NewControllerRef(o, c.gvk)
	tmpl, obj := c.kind.Template(o), object(o)
	names := c.podNames(o, c.podControl.namePrefix(tmpl, obj, ref), n)
	var unknown atomic.Int64
	successes, err := slowstart.BatchIndexed(ctx, n, slowstart.InitialBatchSize, func(ctx context.Context, i int) error {
		name := names[i]
		err := c.podControl.createPod(ctx, o.GetNamespace(), name, tmpl, obj, ref)
		if err != nil && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			// The namespace is going away and so are we; retrying would
			// only spin.
			return nil
		}
		if c.keepUnknownCreate(o, expKey, name, tmpl, err) {
			unknown.Add(1)
		}
		return err
	})
	// Creations that failed or never started will never be observed: take
	// them off the count, or the owner would sleep until the TTL expires.
	if skipped := n - successes - int(unknown.Load()); skipped > 0 {
		logger.V(2).Info("Slow-start failure; lowering expectations", "kind", c.gvk.Kind, "owner", klog.KObj(o), "skipped", skipped)
		c.expectations.LowerExpectations(expKey, skipped, 0)
	}
	if err != nil {
		return fmt.Errorf("creating pods for %s %s/%s: %w", c.gvk.Kind, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// podNames chooses the names of n pods to create: distinct, and none the
// cache holds (see unsure.Namer). Without a prefix the pod control names
// its pods, and every name is "".
func (c *Reconciler[O]) podNames(o O, prefix string, n int) []string {
	names := make([]string, n)
	if prefix == "" {
		return names
	}
	pods := c.podLister.Pods(o.GetNamespace())
	namer := unsure.NewNamer(func(name string) bool {
		_, err := pods.Get(name)
		return err == nil
	})
	for i := range names {
		names[i] = namer.Name(prefix)
	}
	return names
}

func (c *Reconciler[O]) deletePods(ctx context.Context, o O, expKey string, own ownListing, n int) error {
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Too many replicas", "kind", c.gvk.Kind, "owner", klog.KObj(o), "need", c.desired(o), "deleting", n)
	active := own.active
	var victims []*v1.Pod
	if n >= len(active) {
		// Every pod goes: upstream does not sort then, and neither do we;
		// the related pods would not be read.
		victims = slices.Clone(active)
		c.reportScaleDown(nil, o, active, victims)
	} else {
		related, err := c.rankingRelated(o, own)
		if err != nil {
			// Ranking without siblings is still a valid choice, only a
			// less spread one.
			logger.V(4).Info("No related pods for ranking", "owner", klog.KObj(o), "reason", err.Error())
		}
		sel := podranking.NewSelector(c.rankingOptions()...)
		if named, others := c.namedToDeleteFirst(o, active); len(named) > 0 {
			victims = c.podsToDeleteNamedFirst(sel, o, active, named, others, related, n)
			return c.sendPodDeletions(ctx, o, expKey, victims)
		}
		// The pods' facts are kept for the owner's next scale-down, which
		// usually meets most of the same pod objects; without a claim memo
		// (some pod was adopted or released) the ranking keeps nothing.
		var memo *podranking.Memo
		if own.memo != nil {
			memo = own.ranking
			if memo == nil {
				memo = podranking.NewMemo()
			}
			own.memo.ranking = memo
		}
		if c.cfg.onScaleDown == nil {
			// The choice alone: PodsToDelete ranks in memory it reuses
			// from one scale-down to the next.
			if memo != nil {
				victims = sel.PodsToDeleteMemo(memo, active, related, n)
			} else {
				victims = sel.PodsToDelete(active, related, n)
			}
			c.observeDeletionAgeRatio(active, victims)
		} else {
			// One ranking serves the choice, the metric and the report.
			var rk *podranking.Ranking
			if memo != nil {
				rk = sel.RankMemo(memo, active, related)
			} else {
				rk = sel.Rank(active, related)
			}
			victims = rk.PodsToDelete(n)
			c.observeDeletionAgeRatio(active, victims)
			c.reportScaleDown(rk, o, active, victims)
		}
	}
	return c.sendPodDeletions(ctx, o, expKey, victims)
}

// sendPodDeletions deletes victims, expecting each deletion by key.
func (c *Reconciler[O]) sendPodDeletions(ctx context.Context, o O, expKey string, victims []*v1.Pod) error {
	keys := make([]string, len(victims))
	for i, pod := range victims {
		keys[i] = podstate.Key(pod)
	}
	if err := c.expectations.ExpectDeletions(expKey, keys); err != nil {
		return fmt.Errorf("recording %d expected deletions: %w", len(keys), err)
	}
	names := make([]string, len(victims))
	for i, pod := range victims {
		names[i] = pod.Name
	}
	errs := c.podControl.deleteAll(ctx, o.GetNamespace(), names, object(o))
	for i, err := range errs {
		if err == nil {
			continue
		}
		if objectcontrol.OutcomeUnknown(err) {
			// The pod may be gone already: its deletion stays expected
			// until observed or resolved (resolveUnknown), or the next
			// sync, reading a cache that still shows it, would delete
			// another pod in its place.
			c.unsure.Add(expKey, unsure.Write[*v1.PodTemplateSpec]{Namespace: o.GetNamespace(), Name: names[i], Delete: true})
			continue
		}
		// The delete event will not come for this pod, so observe it here;
		// NotFound means someone else deleted it, which is fine.
		c.expectations.DeletionObserved(expKey, keys[i])
		if apierrors.IsNotFound(err) {
			errs[i] = nil
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting pods of %s %s/%s: %w", c.gvk.Kind, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// rankingOptions reads the ranking gate for this sync. Logarithmic
// scale-down is always on, as in upstream v1.37, which removed its gate: a
// v1.37 registry panics when asked about it, so it is never asked.
func (c *Reconciler[O]) rankingOptions() []podranking.Option {
	opts := []podranking.Option{podranking.WithClock(c.cfg.Clock)}
	if !c.cfg.gates(PodDeletionCost) {
		opts = append(opts, podranking.WithoutDeletionCost())
	}
	return opts
}

// reportScaleDown explains each victim against the first survivor, the pod
// that would have gone next.
func (c *Reconciler[O]) reportScaleDown(rk *podranking.Ranking, o O, active, victims []*v1.Pod) {
	if c.cfg.onScaleDown == nil {
		return
	}
	d := ScaleDownDecision{
		Kind: c.gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName(),
		Candidates: len(active), Chosen: victims,
	}
	if rk != nil && len(victims) < len(active) {
		survivor := rk.At(len(victims)) // sorts one position more, not all
		for _, v := range victims {
			d.Reasons = append(d.Reasons, rk.Explain(v, survivor))
		}
	}
	c.cfg.onScaleDown(d)
}
