package childsetcr_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// rsSpec is the owner adapter of the tests: a ReplicaSet owns pods. It has
// no Get, so the core reads owners through the client.
type rsSpec struct{}

func (rsSpec) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (rsSpec) Replicas(rs *appsv1.ReplicaSet) int32 { return ptr.Deref(rs.Spec.Replicas, 1) }
func (rsSpec) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
}
func (rsSpec) NewChild(rs *appsv1.ReplicaSet) (*corev1.Pod, error) {
	return &corev1.Pod{ObjectMeta: *rs.Spec.Template.ObjectMeta.DeepCopy(), Spec: *rs.Spec.Template.Spec.DeepCopy()}, nil
}

// podKind is the child adapter: a pod is ready when its Ready condition is.
type podKind struct{}

func (podKind) Ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	return s
}

func replicaSet(name string, replicas int32, app string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
}

func ref(o client.Object, kind string) metav1.OwnerReference {
	apiVersion := "apps/v1"
	if kind == "ConfigMap" {
		apiVersion = "v1"
	}
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: ptr.To(true)}
}

// pod is a pod of namespace ns labelled app, controlled by owner when it is
// not nil (a ReplicaSet unless kind says otherwise).
func pod(ns, name, rv, app string, owner client.Object, kind string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"app": app}}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{ref(owner, kind)}
	}
	return p
}

// fakeClient is controller-runtime's fake client holding objs, with the
// controller index on pods and the interceptors funcs.
func fakeClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, childsetcr.ControllerField, childsetcr.IndexByController).
		WithInterceptorFuncs(funcs).Build()
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

// newQueue is a priority queue for handler tests; it is shut down with the
// test.
func newQueue(t *testing.T) *ctrlruntime.Queue[reconcile.Request] {
	t.Helper()
	q := ctrlruntime.NewTypedQueue[reconcile.Request](t.Name(), nil)
	t.Cleanup(q.ShutDown)
	return q
}

// drain returns the queued requests and their priorities.
func drain(t *testing.T, q *ctrlruntime.Queue[reconcile.Request]) map[string]int {
	t.Helper()
	out := map[string]int{}
	for q.Len() > 0 {
		req, prio, shutdown := q.GetWithPriority()
		require.False(t, shutdown)
		out[req.String()] = prio
		q.Done(req)
	}
	return out
}
