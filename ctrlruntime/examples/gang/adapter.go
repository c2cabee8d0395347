package gang

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// GangAdapter tells childset what a Gang wants, and what goes in its status.
type GangAdapter struct{}

// GroupVersionKind is Gang's.
func (GangAdapter) GroupVersionKind() schema.GroupVersionKind { return GroupVersion.WithKind("Gang") }

// Replicas is spec.replicas; nil means 1.
func (GangAdapter) Replicas(g *Gang) int32 { return ptr.Deref(g.Spec.Replicas, 1) }

// Selector is spec.selector; a missing one selects nothing, which childset
// refuses with an event.
func (GangAdapter) Selector(g *Gang) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(g.Spec.Selector)
}

// NewChild makes a pod from spec.template; childset names it.
func (GangAdapter) NewChild(g *Gang) (*corev1.Pod, error) {
	t := g.Spec.Template.DeepCopy()
	return &corev1.Pod{ObjectMeta: t.ObjectMeta, Spec: t.Spec}, nil
}

// RollingUpdate is spec.strategy.rollingUpdate, if any.
func (GangAdapter) RollingUpdate(g *Gang) (childset.RollingUpdate, bool) {
	ru := g.Spec.Strategy.RollingUpdate
	if ru == nil {
		return childset.RollingUpdate{}, false
	}
	return childset.RollingUpdate{MaxSurge: ru.MaxSurge, MaxUnavailable: ru.MaxUnavailable, Partition: ru.Partition}, true
}

// RevisionHistoryLimit is spec.revisionHistoryLimit; nil means 10.
func (GangAdapter) RevisionHistoryLimit(g *Gang) int32 {
	return ptr.Deref(g.Spec.RevisionHistoryLimit, 10)
}

// CollisionCount is status.collisionCount.
func (GangAdapter) CollisionCount(g *Gang) *int32 { return g.Status.CollisionCount }

// MinReadySeconds is spec.minReadySeconds.
func (GangAdapter) MinReadySeconds(g *Gang) int32 { return g.Spec.MinReadySeconds }

// SetStatus copies what the sync saw into the status; childsetcr writes it
// when it changed. The collision count is the one the rollout reports, and
// is kept as it was while the Gang does not roll out.
func (GangAdapter) SetStatus(g *Gang, st childset.Status) {
	collisions := g.Status.CollisionCount
	if st.UpdateRevision != "" {
		collisions = &st.CollisionCount
	}
	g.Status = GangStatus{ObservedGeneration: st.ObservedGeneration, Replicas: st.Replicas,
		ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas, UpdatedReplicas: st.UpdatedReplicas,
		CurrentReplicas: st.CurrentReplicas, TerminatingReplicas: st.TerminatingReplicas,
		CurrentRevision: st.CurrentRevision, UpdateRevision: st.UpdateRevision, CollisionCount: collisions}
}

// PodAdapter tells childset which pods are ready.
type PodAdapter struct{}

// Ready is the pod's Ready condition.
func (PodAdapter) Ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ReadySince is when the pod's Ready condition last turned true.
func (PodAdapter) ReadySince(p *corev1.Pod) time.Time { return podstate.ReadyTime(p).Time }

// Controller is the Gang controller in a manager.
type Controller = childsetcr.Reconciler[*Gang, *corev1.Pod]

// SetupWithManager adds the Gang controller, named "gang", to mgr, whose
// scheme must hold client-go's types and AddToScheme's. Its RBAC: Gangs
// (and their status), pods, and apps/controllerrevisions (get, list,
// watch, create, update, patch, delete) for the rollout history. Pods are indexed:
// <gang>-0 .. <gang>-(n-1). opts come after the defaults, so theirs win.
func SetupWithManager(mgr ctrl.Manager, opts ...childsetcr.Option) (*Controller, error) {
	return childsetcr.SetupWithManager[*Gang, *corev1.Pod](mgr, GangAdapter{}, PodAdapter{},
		append([]childsetcr.Option{childsetcr.WithName("gang"),
			childsetcr.WithChildSetOptions(childset.WithIndexedNames(nil))}, opts...)...)
}
