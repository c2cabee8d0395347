package podgroup_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

func newGroup(name string, replicas int64) *unstructured.Unstructured {
	g := podgroup.New()
	g.SetNamespace("ns")
	g.SetName(name)
	g.SetUID(k8stypes.UID("uid-" + name))
	g.Object["spec"] = map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": map[string]any{"group": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"group": name}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "img"}}},
		},
	}
	return g
}

func newScheme(t testing.TB) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	require.NoError(t, podgroup.AddToScheme(s))
	return s
}

// env is a reconciler over controller-runtime's fake client. The fake
// client's reads are never stale, so the test delivers pod events to the
// expectations handler itself, when it chooses.
type env struct {
	client client.WithWatch
	r      *podgroup.Reconciler
	queue  *ctrlruntime.Queue[reconcile.Request]
}

func newEnv(t testing.TB, objs ...client.Object) *env {
	s := newScheme(t)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(podgroup.New()).Build()
	q := ctrlruntime.NewTypedQueue[reconcile.Request]("podgroup-test", nil)
	t.Cleanup(q.ShutDown)
	return &env{client: c, r: podgroup.NewReconciler(c, c, nil), queue: q}
}

func (e *env) reconcile(t testing.TB, name string) error {
	t.Helper()
	_, err := e.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}})
	return err
}

func (e *env) pods(t testing.TB) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	require.NoError(t, e.client.List(context.Background(), list, client.InNamespace("ns")))
	return list.Items
}

// observeAll delivers a create event for every pod, as the informer would.
func (e *env) observeAll(t testing.TB) {
	t.Helper()
	h := e.r.Tracker().Handler()
	for _, p := range e.pods(t) {
		h.Create(context.Background(), event.CreateEvent{Object: &p}, e.queue)
	}
}
