package podgroup

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/podsetcr"
	"github.com/ctrlkit/ctrlkit/examples/podgroup"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Controller is the PodGroup controller in a manager.
type Controller = podsetcr.Controller[*unstructured.Unstructured]

// GroupVersionKind is the PodGroup kind of the library's CRD
// (podgroup.CRD in github.com/ctrlkit/ctrlkit/examples/podgroup).
var GroupVersionKind = podgroup.Kind{}.GroupVersionKind()

// AddToScheme registers PodGroup and PodGroupList as unstructured content.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(GroupVersionKind, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(GroupVersionKind.GroupVersion().WithKind("PodGroupList"), &unstructured.UnstructuredList{})
	metav1.AddToGroupVersion(s, GroupVersionKind.GroupVersion())
	return nil
}

// SetupWithManager adds the PodGroup controller to mgr. The library's
// podgroup.Kind describes the spec and the status; podsetcr reads and
// writes PodGroups through the manager and registers podset's core as a
// reconciler, which the manager runs under its leader election.
func SetupWithManager(mgr ctrl.Manager, opts ...podset.Option) (*Controller, error) {
	return podsetcr.SetupWithManager[*unstructured.Unstructured](mgr, podgroup.Kind{},
		podsetcr.WithName("podgroup"), podsetcr.WithPodSetOptions(opts...))
}
