package gang

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
	"github.com/ctrlkit/ctrlkit/podset"
)

// GangAdapter hands childset a Gang's spec, its pre-delete gate and its status, whose fields are
// childset.StatusFields' (childset reads and writes it), and makes pods from spec.template; childset names them.
type GangAdapter struct{}

func (GangAdapter) Describe(g *Gang) childset.RolloutFields {
	return childset.RolloutFields{Fields: childset.Fields{Replicas: g.Spec.Replicas, Selector: g.Spec.Selector,
		MinReadySeconds: g.Spec.MinReadySeconds, Status: (*childset.StatusFields)(&g.Status), DeletionGate: childset.DeletionGate{
			Label: g.Spec.Lifecycle.PreDelete.Label, Timeout: time.Duration(g.Spec.Lifecycle.PreDelete.TimeoutSeconds) * time.Second}},
		RollingUpdate: (*childset.RollingUpdate)(g.Spec.Strategy.RollingUpdate), RevisionHistoryLimit: g.Spec.RevisionHistoryLimit,
		UpdateStrategy: childset.UpdateStrategy(g.Spec.Strategy.Type)}
}

func (GangAdapter) NewChild(g *Gang) (*corev1.Pod, error) {
	return &corev1.Pod{ObjectMeta: g.Spec.Template.ObjectMeta, Spec: g.Spec.Template.Spec}, nil
}

// SetupWithManager adds the Gang controller to mgr, named "gang" (the kind's default) unless opts say
// otherwise. Pods are indexed, <gang>-0 .. <gang>-(n-1), ready by their Ready condition, updated in place by podset.InPlace.
func SetupWithManager(mgr ctrl.Manager, opts ...childsetcr.Option) (*childsetcr.Reconciler[*Gang, *corev1.Pod], error) {
	indexed := childsetcr.WithChildSetOptions(childset.WithIndexedNames(nil))
	return childsetcr.SetupWithManager[*Gang, *corev1.Pod](mgr, GangAdapter{}, podset.Pods{}, append([]childsetcr.Option{indexed}, opts...)...)
}
