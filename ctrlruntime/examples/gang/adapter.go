package gang

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// GangAdapter tells childset what a Gang wants.
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

// Controller is the Gang controller in a manager.
type Controller = childsetcr.Reconciler[*Gang, *corev1.Pod]

// SetupWithManager adds the Gang controller, named "gang", to mgr, whose
// scheme must hold client-go's types and AddToScheme's. Pods are indexed:
// <gang>-0 .. <gang>-(n-1). opts come after the defaults, so theirs win.
func SetupWithManager(mgr ctrl.Manager, opts ...childsetcr.Option) (*Controller, error) {
	return childsetcr.SetupWithManager[*Gang, *corev1.Pod](mgr, GangAdapter{}, PodAdapter{},
		append([]childsetcr.Option{childsetcr.WithName("gang"),
			childsetcr.WithChildSetOptions(childset.WithIndexedNames(nil))}, opts...)...)
}
