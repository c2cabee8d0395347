package workerset

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// SetAdapter hands childset a WorkerSet's spec, its pre-delete gate and its status, whose fields are childset.StatusFields'
// (childset reads and writes it), and makes Workers from spec.template, which childset copies before changing anything.
type SetAdapter struct{}

func (SetAdapter) Describe(s *WorkerSet) childset.RolloutFields {
	return childset.RolloutFields{Fields: childset.Fields{Replicas: s.Spec.Replicas, Selector: s.Spec.Selector,
		MinReadySeconds: s.Spec.MinReadySeconds, Status: (*childset.StatusFields)(&s.Status), DeletionGate: childset.DeletionGate{
			Label: s.Spec.Lifecycle.PreDelete.Label, Timeout: time.Duration(s.Spec.Lifecycle.PreDelete.TimeoutSeconds) * time.Second}},
		RollingUpdate: (*childset.RollingUpdate)(s.Spec.Strategy.RollingUpdate), RevisionHistoryLimit: s.Spec.RevisionHistoryLimit,
		Paused: s.Spec.Paused, ProgressDeadlineSeconds: s.Spec.ProgressDeadlineSeconds, UpdateStrategy: childset.UpdateStrategy(s.Spec.Strategy.Type)}
}
func (SetAdapter) NewChild(s *WorkerSet) (*Worker, error) {
	t := s.Spec.Template
	return &Worker{ObjectMeta: metav1.ObjectMeta{Labels: t.Metadata.Labels, Annotations: t.Metadata.Annotations}, Spec: t.Spec}, nil
}

// WorkerAdapter says a Worker is ready by status.ready, since status.readySince; ready ones are deleted last.
type WorkerAdapter struct{}

func (WorkerAdapter) Ready(w *Worker) bool { return w.Status.Ready }
func (WorkerAdapter) ReadySince(w *Worker) time.Time {
	return ptr.Deref(w.Status.ReadySince, metav1.Time{}).Time
}

// SetupWithManager adds the WorkerSet controller to mgr, named "workerset" (the kind's default) unless opts say otherwise.
func SetupWithManager(mgr ctrl.Manager, opts ...childsetcr.Option) (*childsetcr.Reconciler[*WorkerSet, *Worker], error) {
	return childsetcr.SetupWithManager[*WorkerSet, *Worker](mgr, SetAdapter{}, WorkerAdapter{}, opts...)
}
