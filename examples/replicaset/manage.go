package replicaset

import (
	"context"
	"errors"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

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
	// empty when every pod goes, as there is no choice to explain then.
	Reasons []podranking.Decision
}

// ScaleDownFunc receives scale-down decisions; see WithScaleDownReporter.
type ScaleDownFunc func(ScaleDownDecision)

// manageReplicas creates or deletes at most burst pods to move the active
// count towards spec.replicas. Expectations are raised before the first API
// call, so the pods' own events can never arrive ahead of them.
func (c *Controller) manageReplicas(ctx context.Context, o owner, expKey string, active []*v1.Pod) error {
	diff := len(active) - o.replicas()
	switch {
	case diff < 0:
		return c.createPods(ctx, o, expKey, min(-diff, c.cfg.burst))
	case diff > 0:
		return c.deletePods(ctx, o, expKey, active, min(diff, c.cfg.burst))
	}
	return nil
}

func (c *Controller) createPods(ctx context.Context, o owner, expKey string, n int) error {
	logger := klog.FromContext(ctx)
	if err := c.expectations.ExpectCreations(expKey, n); err != nil {
		return fmt.Errorf("recording %d expected creations: %w", n, err)
	}
	logger.V(2).Info("Too few replicas", "kind", c.kind.groupVersionKind().Kind, "owner", klog.KObj(o), "need", o.replicas(), "creating", n)
	ref := metav1.NewControllerRef(o, c.kind.groupVersionKind())
	successes, err := slowstart.Batch(ctx, n, slowstart.InitialBatchSize, func(ctx context.Context) error {
		err := c.podControl.CreatePods(ctx, o.GetNamespace(), o.template(), o.object(), ref)
		if err != nil && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
			// The namespace is going away and so are we; retrying would
			// only spin.
			return nil
		}
		return err
	})
	// Creations that failed or never started will never be observed: take
	// them off the count, or the owner would sleep until the TTL expires.
	if skipped := n - successes; skipped > 0 {
		logger.V(2).Info("Slow-start failure; lowering expectations", "kind", c.kind.groupVersionKind().Kind, "owner", klog.KObj(o), "skipped", skipped)
		c.expectations.LowerExpectations(expKey, skipped, 0)
	}
	if err != nil {
		return fmt.Errorf("creating pods for %s %s/%s: %w", c.kind.groupVersionKind().Kind, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

func (c *Controller) deletePods(ctx context.Context, o owner, expKey string, active []*v1.Pod, n int) error {
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Too many replicas", "kind", c.kind.groupVersionKind().Kind, "owner", klog.KObj(o), "need", o.replicas(), "deleting", n)
	related, err := c.relatedPods(o)
	if err != nil {
		// Ranking without siblings is still a valid choice, only a less
		// spread one.
		logger.V(4).Info("No related pods for ranking", "owner", klog.KObj(o), "reason", err.Error())
	}
	sel := podranking.NewSelector(podranking.WithClock(c.cfg.clock))
	victims := sel.PodsToDelete(active, related, n)
	c.reportScaleDown(sel, o, active, related, victims)

	keys := make([]string, len(victims))
	for i, pod := range victims {
		keys[i] = podstate.Key(pod)
	}
	if err := c.expectations.ExpectDeletions(expKey, keys); err != nil {
		return fmt.Errorf("recording %d expected deletions: %w", len(keys), err)
	}
	errs := make([]error, len(victims))
	var wg sync.WaitGroup
	for i, pod := range victims {
		wg.Go(func() {
			err := c.podControl.DeletePod(ctx, o.GetNamespace(), pod.Name, o.object())
			if err == nil {
				return
			}
			// The delete event will not come for this pod, so observe it
			// here; NotFound means someone else deleted it, which is fine.
			c.expectations.DeletionObserved(expKey, keys[i])
			if !apierrors.IsNotFound(err) {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting pods of %s %s/%s: %w", c.kind.groupVersionKind().Kind, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// relatedPods returns the pods of every owner that shares o's controller (o
// included), active or not, each once: a scale-down prefers pods whose node
// runs many of them. An owner without a controller has no siblings.
func (c *Controller) relatedPods(o owner) ([]*v1.Pod, error) {
	siblings, err := c.kind.sameController(o)
	if err != nil {
		return nil, err
	}
	seen := make(map[types.UID]bool)
	var out []*v1.Pod
	for _, s := range siblings {
		selector, err := s.selector()
		if err != nil {
			continue
		}
		pods, err := c.podLister.Pods(s.GetNamespace()).List(selector)
		if err != nil {
			return nil, fmt.Errorf("listing pods of %s/%s: %w", s.GetNamespace(), s.GetName(), err)
		}
		for _, pod := range pods {
			if !seen[pod.UID] {
				seen[pod.UID] = true
				out = append(out, pod)
			}
		}
	}
	return out, nil
}

// reportScaleDown explains each victim against the first survivor, the pod
// that would have gone next.
func (c *Controller) reportScaleDown(sel *podranking.Selector, o owner, active, related, victims []*v1.Pod) {
	if c.cfg.onScaleDown == nil {
		return
	}
	d := ScaleDownDecision{
		Kind: c.kind.groupVersionKind().Kind, Namespace: o.GetNamespace(), Name: o.GetName(),
		Candidates: len(active), Chosen: victims,
	}
	if len(victims) < len(active) {
		order := sel.Order(active, related)
		survivor := order[len(victims)]
		for _, v := range victims {
			d.Reasons = append(d.Reasons, sel.Explain(active, related, v, survivor))
		}
	}
	c.cfg.onScaleDown(d)
}
