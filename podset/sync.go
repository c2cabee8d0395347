package podset

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/writedeadline"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
	"github.com/ctrlkit/ctrlkit/status"
)

// Reconcile brings one owner, named by its "namespace/name" key, to its
// desired pod count and writes its status. It is upstream's syncReplicaSet:
// the read-your-writes check, the expectations gate read before the pods,
// claim, create or delete, status, and the next availability check. It
// touches no queue: the Result says when to look at the owner again (when
// its unmet expectations expire, or when a ready pod becomes available),
// and whoever drives it applies that. It must not run concurrently for the
// same key; a work queue guarantees that.
//
// Every write it makes (pod creations, deletions, adoption and release
// patches, the status update, and the uncached re-read before adopting)
// gets a context deadline of the write timeout (WithWriteTimeout), and
// Reconcile stops waiting for it then even if the pod control or Kind
// ignores the context: the call is abandoned, its goroutine ending whenever
// it returns. A creation abandoned that way, or answered with a deadline
// error, may still happen; its expectation is kept, to be met by the pod's
// event or to expire, as upstream treats a creation whose answer was lost.
//
// With WithSyncGuard, the whole of it runs under the guard, or not at all.
func (c *Reconciler[O]) Reconcile(ctx context.Context, key string) (_ childset.Result, err error) {
	logger := klog.FromContext(ctx)
	start := c.cfg.Clock.Now()
	defer func() {
		took := c.cfg.Clock.Since(start)
		// Checked first so that, at the usual verbosity, the arguments are
		// not evaluated and boxed on every sync.
		if v := logger.V(4); v.Enabled() {
			v.Info("Finished syncing", "kind", c.gvk.Kind, "key", key, "duration", took)
		}
		// Here rather than in a driver, so that every host reports it.
		if m := c.cfg.syncMetrics; m != nil {
			m.ObserveSync(c.gvk.Kind, took, err)
		}
	}()
	if g := c.cfg.syncGuard; g != nil {
		guarded, done, retry, ok := g(ctx, key)
		if !ok {
			logger.V(4).Info("Owner not held by this replica now; skipped", "kind", c.gvk.Kind, "key", key, "retryAfter", retry)
			c.memos.drop(key)
			return childset.Result{RequeueAfter: max(retry, 0)}, nil
		}
		defer done()
		ctx = guarded
	}
	gates := c.cfg.gates

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return childset.Result{}, fmt.Errorf("bad queue key %q: %w", key, err)
	}
	// A cache older than our own last write for this owner would show pods
	// or a status we have already moved past: wait for it (the error
	// matches consistency.ErrStaleCache and requeues with backoff).
	guard := c.guard
	if guard != nil && !gates(StaleControllerConsistencyReplicaSet) {
		guard = nil
	}
	if guard != nil {
		if err := guard.EnsureReady(key); err != nil {
			return childset.Result{}, err
		}
	}
	o, err := c.kind.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		// The delete handler has already dropped the expectations of the
		// incarnation that went away; with UID-bound keys there is no other
		// record this name could reach.
		logger.V(4).Info("Owner deleted", "kind", c.gvk.Kind, "key", key)
		c.memos.drop(key)
		if c.guard != nil {
			c.guard.Clear(key)
		}
		return childset.Result{}, nil
	}
	if err != nil {
		return childset.Result{}, fmt.Errorf("reading %s %s from the cache: %w", c.gvk.Kind, key, err)
	}
	expKey := expectations.OwnerKeyFor(o)

	// Read the gate before the pods: a pod observed after this point cannot
	// make the count look short and trigger an extra creation.
	needsSync := c.expectations.SatisfiedExpectations(expKey)

	// Refuse what can never converge before any write: an unusable or
	// empty selector, or one that would not select the pods created from
	// the template. Retrying cannot fix the object; its next update will.
	withTerminating := gates(DeploymentReplicaSetTerminatingReplicas)
	tmpl := c.kind.Template(o)
	selector, selErr := c.kind.Selector(o)
	if specErr := checkSpec(selector, selErr, tmpl); specErr != nil {
		return childset.Result{}, c.refuse(ctx, o, key, expKey, guard, specErr, withTerminating)
	}

	allPods, err := c.podsForOwner(o)
	if err != nil {
		return childset.Result{}, err
	}
	var templateLabels map[string]string
	if tmpl != nil {
		templateLabels = tmpl.Labels
	}
	minReadySeconds := c.kind.MinReadySeconds(o)
	// Without minReadySeconds a pod is available exactly when it is ready,
	// whatever the time, so the status can be counted while the pods are
	// claimed: each pod is then read once per sync instead of once to sort
	// it by phase, once to claim it and once to count it, which on a large
	// owner means fetching it from memory three times. With
	// minReadySeconds, availability is measured after manageReplicas, as
	// upstream measures it, and the status counts the pods then.
	var counter *status.ReplicaCounter
	if minReadySeconds == 0 {
		counter = ptr.To(status.NewReplicaCounter(templateLabels, 0, time.Time{}))
	}
	active, terminating, memo, err := c.claimPodsMemo(ctx, o, selector, allPods, withTerminating, counter)
	if err != nil {
		return childset.Result{}, err
	}
	var rankingMemo *podranking.Memo
	if memo != nil {
		rankingMemo = memo.takeRanking()
	}

	var res childset.Result
	var manageErr error
	if needsSync {
		// Every write this owner waited for was observed (or expired):
		// none is left to resolve.
		c.unsure.Forget(expKey)
	}
	if needsSync && o.GetDeletionTimestamp() == nil {
		manageErr = c.manageReplicas(ctx, o, expKey, ownListing{pods: allPods, active: active, selector: selector, memo: memo, ranking: rankingMemo})
	} else if !needsSync {
		// Without this an owner whose pod creation is never observed would
		// sleep until some unrelated event, forever with resync disabled;
		// upstream relies on the informer resync for it.
		res.RequeueAfter = c.untilExpiry(expKey)
		if o.GetDeletionTimestamp() == nil {
			manageErr = c.resolveUnknown(ctx, o, expKey)
		}
	}
	now := c.cfg.Clock.Now()
	in := StatusInput{
		Active: active, Terminating: terminating, TerminatingReplicas: withTerminating,
		ManageErr: manageErr, Now: now, minReadySeconds: minReadySeconds, templateLabels: templateLabels,
	}
	if counter != nil {
		in.counts, in.counted = counter.Counts(), true
	}
	if err := c.writeStatus(ctx, o, key, expKey, guard, in); err != nil {
		// A failed status write wins over a manageReplicas error: both
		// retry, and the next sync retries both.
		return res, err
	}
	if manageErr != nil {
		return res, manageErr
	}
	if d, ok := c.nextAvailabilityCheck(in, active, now); ok {
		// A check already due asks for the shortest delay: 0 asks nothing.
		d = max(d, time.Nanosecond)
		if res.RequeueAfter == 0 || d < res.RequeueAfter {
			res.RequeueAfter = d
		}
	}
	return res, nil
}

// writeStatus writes the status computed from in through the Kind and
// records the owner's new resource version for the read-your-writes guard.
// guard is nil when the guard is off for this sync.
func (c *Reconciler[O]) writeStatus(ctx context.Context, o O, key, expKey string, guard *consistency.Guard, in StatusInput) error {
	updated, err := writedeadline.Call(ctx, c.cfg.writeTimeout, "writing the status", func(ctx context.Context) (O, error) {
		return c.kind.UpdateStatus(ctx, o, in)
	})
	if err != nil {
		return fmt.Errorf("updating status of %s %s: %w", c.gvk.Kind, key, err)
	}
	if guard != nil && any(updated) != any(*new(O)) {
		guard.WroteAt(expKey, c.ownerGR, updated.GetResourceVersion())
	}
	return nil
}

// untilExpiry is how long the unmet expectations of expKey still hold the
// owner back; 0 when there are none.
func (c *Reconciler[O]) untilExpiry(expKey string) time.Duration {
	exp, ok, err := c.expectations.GetExpectations(expKey)
	if err != nil || !ok {
		return 0
	}
	// Expiry is strictly after the TTL: aim just past it.
	at := exp.Timestamp().Add(expectations.ExpectationsTimeout + time.Millisecond)
	// A Result of 0 asks for nothing, so an expiry already past asks for
	// the shortest delay instead.
	return max(at.Sub(c.cfg.Clock.Now()), time.Nanosecond)
}

// claimPods sorts the owner's candidate pods (from podsForOwner) by phase and
// claims the active ones: it adopts matching orphans and releases owned pods
// that no longer match, as upstream's claim of its active pods does. It
// returns the active pods the owner controls afterwards and, with
// withTerminating, the terminating pods it controls and selects (counted,
// never claimed), both in input order; nil entries are dropped. A non-nil
// counter counts every active pod claimed.
//
// It is one pass, so each pod is read once: first its phase, then its owner
// reference and labels, then, for the counter, its conditions; and a pod
// object the owner's claim memo has judged before is not read at all
// (claimmemo.go). The active
// pods are gathered in place at the front of pods, which podsForOwner made
// for this sync alone; the other pods are swapped behind them, so that pods
// still holds every pod it was given, for a scale-down's related pods. Claim errors are aggregated as upstream's ClaimPods
// aggregates them; the other pods are still claimed.
//
// Adoption first re-reads the owner from the API server: a cached copy may
// not show that it is being deleted, and adopting then would leave pods
// behind the garbage collector (kubernetes#42639).
func (c *Reconciler[O]) claimPods(ctx context.Context, o O, selector labels.Selector, pods []*v1.Pod,
	withTerminating bool, counter *status.ReplicaCounter) (active, terminating []*v1.Pod, err error) {
	active, terminating, _, err = c.claimPodsMemo(ctx, o, selector, pods, withTerminating, counter)
	return active, terminating, err
}

// claimPodsMemo is claimPods, also returning the owner's claim memo when,
// after this claim, it holds exactly the non-nil pods of pods (nil
// otherwise), for the related pods of a scale-down to compare listings by.
func (c *Reconciler[O]) claimPodsMemo(ctx context.Context, o O, selector labels.Selector, pods []*v1.Pod,
	withTerminating bool, counter *status.ReplicaCounter) (active, terminating []*v1.Pod, exact *claimMemo, err error) {
	canAdopt := claim.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		// A read, but one that gates writes: bounded like them.
		fresh, err := writedeadline.Call(ctx, c.cfg.writeTimeout, "re-reading the owner", func(ctx context.Context) (O, error) {
			return c.kind.GetUncached(ctx, o.GetNamespace(), o.GetName())
		})
		if err != nil {
			return nil, err
		}
		if fresh.GetUID() != o.GetUID() {
			return nil, fmt.Errorf("original %s %s/%s is gone: got uid %v, wanted %v",
				c.gvk.Kind, o.GetNamespace(), o.GetName(), fresh.GetUID(), o.GetUID())
		}
		return fresh, nil
	})
	m := claim.NewPodControllerRefManager(c.podControl, o, selector, c.gvk, canAdopt)
	uid := o.GetUID()
	var templateLabels map[string]string
	if tmpl := c.kind.Template(o); tmpl != nil {
		templateLabels = tmpl.Labels
	}
	// A count that depends on the time cannot be kept; without a memo
	// every pod is judged afresh.
	var memo *claimMemo
	if counter == nil || counter.StableClasses() {
		memo = c.memos.claim(ownerKey(o), uid, selector, templateLabels, counter != nil)
	}
	var errs []error
	kept, known, listed := 0, 0, 0
	for i, pod := range pods {
		if pod == nil {
			continue
		}
		listed++
		var v podVerdict
		ok := false
		if memo != nil {
			v, ok = memo.pods[pod]
		}
		if !ok {
			v, ok = judge(pod, uid, selector, counter)
			if ok && memo != nil {
				memo.add(pod, v)
			}
		}
		if ok {
			known++
			switch v.kind {
			case verdictOwned:
				pods[kept], pods[i] = pod, pods[kept]
				kept++
				if counter != nil {
					counter.AddClass(v.class)
				}
			case verdictTerminating:
				if withTerminating {
					terminating = append(terminating, pod)
				}
			}
			continue
		}
		// An adoption or a release: the claim writes, and decides again
		// at the next sync, on the pod the write produces.
		owned, err := m.ClaimPod(ctx, pod)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !owned {
			continue
		}
		pods[kept], pods[i] = pod, pods[kept]
		kept++
		if counter != nil {
			counter.Add(pod)
		}
	}
	if memo != nil {
		memo.prune(pods, known)
		if known == listed && len(memo.pods) == listed {
			exact = memo
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return nil, nil, nil, err
	}
	if kept > 0 {
		active = pods[:kept:kept]
	}
	return active, terminating, exact, nil
}

// nextAvailabilityCheck says when to look again at an owner some of whose
// ready pods are not yet available: at the exact moment the first of them
// passes minReadySeconds, measured on the clock, or at once if that moment
// has already gone by. ok is false when no check is needed. The counts are
// those the status was written from.
func (c *Reconciler[O]) nextAvailabilityCheck(in StatusInput, active []*v1.Pod, evaluatedAt time.Time) (time.Duration, bool) {
	mrs := in.minReadySeconds
	if mrs <= 0 {
		return 0, false
	}
	if counts := in.Counts(); counts.ReadyReplicas == counts.AvailableReplicas {
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
	return max(earliest.Sub(c.cfg.Clock.Now()), 0), true
}
