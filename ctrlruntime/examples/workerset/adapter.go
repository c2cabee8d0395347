package workerset

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// SetAdapter tells childset what a WorkerSet wants.
type SetAdapter struct{}

// GroupVersionKind is WorkerSet's.
func (SetAdapter) GroupVersionKind() schema.GroupVersionKind {
	return GroupVersion.WithKind("WorkerSet")
}

// Replicas is spec.replicas; nil means 1.
func (SetAdapter) Replicas(s *WorkerSet) int32 { return ptr.Deref(s.Spec.Replicas, 1) }

// Selector is spec.selector; a missing one selects nothing, which childset
// refuses with an event.
func (SetAdapter) Selector(s *WorkerSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s.Spec.Selector)
}

// NewChild makes a Worker from spec.template.
func (SetAdapter) NewChild(s *WorkerSet) (*Worker, error) {
	return &Worker{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      maps.Clone(s.Spec.Template.Metadata.Labels),
			Annotations: maps.Clone(s.Spec.Template.Metadata.Annotations),
		},
		Spec: s.Spec.Template.Spec,
	}, nil
}

// WorkerAdapter tells childset which Workers are ready: the ones deleted
// last on a scale-down.
type WorkerAdapter struct{}

// Ready is status.ready.
func (WorkerAdapter) Ready(w *Worker) bool { return w.Status.Ready }

// Controller is the WorkerSet controller in a manager.
type Controller = childsetcr.Reconciler[*WorkerSet, *Worker]

// SetupWithManager adds the WorkerSet controller, named "workerset", to
// mgr, whose scheme must hold AddToScheme's types. opts come after the
// name, so a WithName among them wins.
func SetupWithManager(mgr ctrl.Manager, opts ...childsetcr.Option) (*Controller, error) {
	return childsetcr.SetupWithManager[*WorkerSet, *Worker](mgr, SetAdapter{}, WorkerAdapter{},
		append([]childsetcr.Option{childsetcr.WithName("workerset")}, opts...)...)
}
