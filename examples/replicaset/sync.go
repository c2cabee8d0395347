package replicaset

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// Event reasons this controller records beyond those of pod control.
const (
	// ReasonSelectorInvalid is the Warning recorded on an owner whose
	// selector cannot be converted; the owner is then left alone until it
	// changes, instead of being retried in a hot loop.
	ReasonSelectorInvalid = "SelectorInvalid"
)

// sync brings one owner, named by its "namespace/name" key, to its desired
// pod count and writes its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	start := c.cfg.clock.Now()
	defer func() {
		// Checked first so that, at the usual verbosity, the arguments are
		// not evaluated and boxed on every sync.
		if v := logger.V(4); v.Enabled() {
			v.Info("Finished syncing", "kind", c.kind.groupVersionKind().Kind, "key", key, "duration", c.cfg.clock.Since(start))
		}
	}()

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("bad queue key %q: %w", key, err)
	}
	o, err := c.kind.get(namespace, name)
	if apierrors.IsNotFound(err) {
		// The delete handler has already dropped the expectations of the
		// incarnation that went away; with UID-bound keys there is no other
		// record this name could reach.
		logger.V(4).Info("Owner deleted", "kind", c.kind.groupVersionKind().Kind, "key", key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s from the cache: %w", c.kind.groupVersionKind().Kind, key, err)
	}
	expKey := expectations.OwnerKeyFor(o)

	// Read the gate before the pods: a pod observed after this point cannot
	// make the count look short and trigger an extra creation.
	needsSync := c.expectations.SatisfiedExpectations(expKey)

	selector, err := o.selector()
	if err != nil {
		// Retrying cannot fix the object; the next update of it will.
		c.recorder.Eventf(o.object(), v1.EventTypeWarning, ReasonSelectorInvalid, "Invalid selector: %v", err)
		logger.Error(err, "Invalid selector; not syncing until the object changes", "kind", c.kind.groupVersionKind().Kind, "key", key)
		return nil
	}

	allPods, err := c.candidatePods(o)
	if err != nil {
		return err
	}
	activeCandidates, terminatingCandidates := splitByPhase(allPods)
	active, err := c.claimPods(ctx, o, selector, activeCandidates)
	if err != nil {
		return err
	}
	terminating := claimedOnly(o, selector, terminatingCandidates)

	var manageErr error
	if needsSync && o.GetDeletionTimestamp() == nil {
		manageErr = c.manageReplicas(ctx, o, expKey, active)
	}
	now := c.cfg.clock.Now()
	updated, err := c.kind.updateStatus(ctx, o, active, terminating, manageErr, now)
	if err != nil {
		// A failed status write wins over a manageReplicas error: both
		// requeue, and the next sync retries both.
		return fmt.Errorf("updating status of %s %s: %w", c.kind.groupVersionKind().Kind, key, err)
	}
	if manageErr != nil {
		return manageErr
	}
	if d, ok := c.nextAvailabilityCheck(updated, active, now); ok {
		c.queue.AddAfter(key, d)
	}
	return nil
}

// claimPods adopts matching orphans and releases owned pods that no longer
// match. Adoption first re-reads the owner from the API server: a cached copy
// may not show that it is being deleted, and adopting then would leave pods
// behind the garbage collector (kubernetes#42639).
func (c *Controller) claimPods(ctx context.Context, o owner, selector labels.Selector, pods []*v1.Pod) ([]*v1.Pod, error) {
	gvk := c.kind.groupVersionKind()
	canAdopt := claim.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		fresh, err := c.kind.fetch(ctx, o.GetNamespace(), o.GetName())
		if err != nil {
			return nil, err
		}
		if fresh.GetUID() != o.GetUID() {
			return nil, fmt.Errorf("original %s %s/%s is gone: got uid %v, wanted %v",
				gvk.Kind, o.GetNamespace(), o.GetName(), fresh.GetUID(), o.GetUID())
		}
		return fresh, nil
	})
	m := claim.NewPodControllerRefManager(c.podControl, o.object().(metav1.Object), selector, gvk, canAdopt)
	return m.ClaimPods(ctx, pods)
}

// splitByPhase is podstate.FilterActive and podstate.FilterTerminating in
// one pass: each filter reads every pod twice (count, then copy), so a sync
// would otherwise touch each candidate pod four times before claiming. Like
// the filters it keeps input order, drops nil entries and returns nil for an
// empty result.
//
// In the steady state every candidate is active; active is then pods itself,
// not a copy. Callers only read it (the claim builds its own result), so the
// sharing is safe and saves an allocation the size of the owner.
func splitByPhase(pods []*v1.Pod) (active, terminating []*v1.Pod) {
	// pods[:kept] are active for as long as no other pod has been seen;
	// active is allocated only at the first pod that is not.
	kept := 0
	shared := true
	for i, pod := range pods {
		isActive := podstate.IsActive(pod)
		if shared {
			if isActive {
				kept++
				continue
			}
			shared = false
			active = make([]*v1.Pod, kept, kept+len(pods)-i-1)
			copy(active, pods[:kept])
		}
		switch {
		case isActive:
			active = append(active, pod)
		case podstate.IsTerminating(pod):
			terminating = append(terminating, pod)
		}
	}
	if shared {
		active = pods[:kept:kept]
	}
	if len(active) == 0 {
		active = nil
	}
	return active, terminating
}

// claimedOnly keeps the pods o controls and still selects, without adopting
// anything: terminating pods are counted, never claimed.
func claimedOnly(o owner, selector labels.Selector, pods []*v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	uid := o.GetUID()
	for _, pod := range pods {
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && ref.UID == uid && selector.Matches(labels.Set(pod.Labels)) {
			out = append(out, pod)
		}
	}
	return out
}

// nextAvailabilityCheck says when to look again at an owner some of whose
// ready pods are not yet available: at the exact moment the first of them
// passes minReadySeconds, measured on the clock, or at once if that moment
// has already gone by. ok is false when no check is needed.
func (c *Controller) nextAvailabilityCheck(o owner, active []*v1.Pod, evaluatedAt time.Time) (time.Duration, bool) {
	mrs := o.minReadySeconds()
	ready, available := o.readiness()
	if mrs <= 0 || ready == available {
		return 0, false
	}
	minReady := time.Duration(mrs) * time.Second
	var earliest time.Time
	for _, pod := range active {
		if !podstate.IsReady(pod) {
			continue
		}
		since := podstate.ReadyTime(pod)
		if since.IsZero() {
			continue
		}
		at := since.Add(minReady)
		// Pods already available when the status was computed need no check.
		if !at.After(evaluatedAt) {
			continue
		}
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
		}
	}
	if earliest.IsZero() {
		// Nothing pending by the pods' clocks: fall back to a full period,
		// the last line of defence against skew.
		return minReady, true
	}
	return max(earliest.Sub(c.cfg.clock.Now()), 0), true
}
