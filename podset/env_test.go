package podset

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/internal/testpods"
	"github.com/ctrlkit/ctrlkit/internal/trimtest"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/status"
	"github.com/ctrlkit/ctrlkit/workqueue"
)

// rsKind is a test Kind for apps/v1 ReplicaSets (the real adapter lives in
// examples/replicaset, which imports this package). Siblings come from the
// whole cache filtered by controller UID.
type rsKind struct {
	client  kubernetes.Interface
	indexer cache.Indexer
}

func (rsKind) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (rsKind) Replicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}
func (rsKind) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	if rs.Spec.Selector == nil {
		return nil, fmt.Errorf("no selector")
	}
	return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
}
func (rsKind) Template(rs *appsv1.ReplicaSet) *v1.PodTemplateSpec { return &rs.Spec.Template }
func (rsKind) MinReadySeconds(rs *appsv1.ReplicaSet) int32        { return rs.Spec.MinReadySeconds }
func (k rsKind) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	obj, ok, err := k.indexer.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrorsNotFound(name)
	}
	return obj.(*appsv1.ReplicaSet), nil
}
func (k rsKind) GetUncached(ctx context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return k.client.AppsV1().ReplicaSets(namespace).Get(ctx, name, metav1.GetOptions{})
}
func (k rsKind) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, in StatusInput) (*appsv1.ReplicaSet, error) {
	var opts []status.Option
	if in.TerminatingReplicas {
		opts = append(opts, status.WithTerminatingReplicas())
	}
	// Every sync of this suite checks the counts made while claiming
	// against a count of the result, as the status package would make it.
	recounted := status.CountReplicas(in.Active, rs.Spec.Template.Labels, rs.Spec.MinReadySeconds, in.Now)
	if got := in.Counts(); got != recounted {
		return nil, fmt.Errorf("sync counted %+v, the active pods count %+v", got, recounted)
	}
	opts = append(opts, status.WithReplicaCounts(in.Counts()))
	st := status.CalculateReplicaSetStatus(rs, in.Active, in.Terminating, in.ManageErr, in.Now, opts...)
	return status.UpdateReplicaSetStatus(ctx, k.client.AppsV1().ReplicaSets(rs.Namespace), rs, st)
}
func (k rsKind) Siblings(rs *appsv1.ReplicaSet) ([]*appsv1.ReplicaSet, error) {
	ref := metav1.GetControllerOfNoCopy(rs)
	if ref == nil {
		return nil, nil
	}
	var out []*appsv1.ReplicaSet
	for _, obj := range k.indexer.List() {
		s := obj.(*appsv1.ReplicaSet)
		if r := metav1.GetControllerOfNoCopy(s); r != nil && r.UID == ref.UID {
			out = append(out, s)
		}
	}
	return out, nil
}

// env is one controller under test on a fake clientset, with informers that
// are never started: tests fill the caches directly.
type env struct {
	t      testing.TB
	ctx    context.Context
	client *fake.Clientset
	inf    informers.SharedInformerFactory
	pc     *podcontrol.FakePodControl
	rec    *record.FakeRecorder
	c      *Controller[*appsv1.ReplicaSet]
	kind   Kind[*appsv1.ReplicaSet]
}

// podSpec is a podSpec over the env's informers and Kind, as the
// controller's own, for tests of its parts.
func (e *env) podSpec() podSpec[*appsv1.ReplicaSet] {
	pods, owners := e.inf.Core().V1().Pods().Informer(), e.inf.Apps().V1().ReplicaSets().Informer()
	p, err := newParts(e.ctx, informerReads[*appsv1.ReplicaSet](pods.GetIndexer(), owners.GetIndexer()), e.kind, nil, nil,
		[]Option{WithPodControl(e.pc), WithEventRecorder(nil)})
	require.NoError(e.t, err)
	return p.spec
}

func newEnv(t testing.TB, objects []runtime.Object, opts ...Option) *env {
	t.Helper()
	return newEnvWrapped(t, nil, objects, opts...)
}

// newEnvWrapped is newEnv with the test Kind passed through wrap, when not
// nil, before the controller gets it.
func newEnvWrapped(t testing.TB, wrap func(Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet], objects []runtime.Object, opts ...Option) *env {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewSimpleClientset(objects...)
	f := informers.NewSharedInformerFactory(client, 0)
	pc := &podcontrol.FakePodControl{}
	rec := record.NewFakeRecorder(100)
	rsInf := f.Apps().V1().ReplicaSets().Informer()
	if trimtest.Enabled() {
		require.NoError(t, f.Core().V1().Pods().Informer().SetTransform(TrimPod))
	}
	all := append([]Option{WithPodControl(pc), WithEventRecorder(rec)}, opts...)
	kind := Kind[*appsv1.ReplicaSet](rsKind{client: client, indexer: rsInf.GetIndexer()})
	if wrap != nil {
		kind = wrap(kind)
	}
	c, err := New(ctx, client, f.Core().V1().Pods(), rsInf, kind, all...)
	require.NoError(t, err)
	return &env{t: t, ctx: ctx, client: client, inf: f, pc: pc, rec: rec, c: c, kind: kind}
}

func (e *env) addOwner(rs *appsv1.ReplicaSet) {
	require.NoError(e.t, e.inf.Apps().V1().ReplicaSets().Informer().GetIndexer().Add(rs))
}

func (e *env) podStore() cache.Indexer { return e.inf.Core().V1().Pods().Informer().GetIndexer() }

func (e *env) addPods(pods ...*v1.Pod) {
	for _, p := range pods {
		require.NoError(e.t, e.podStore().Add(trimtest.Pod(e.t, p, TrimPod)))
	}
}

func (e *env) sync(rs *appsv1.ReplicaSet) error { return e.syncKey(rs.Namespace + "/" + rs.Name) }

// syncKey reconciles key as a worker would, queueing it again when the
// Result asks for it, and returns the error.
func (e *env) syncKey(key string) error {
	res, err := e.c.Reconcile(e.ctx, key)
	if res.RequeueAfter > 0 {
		e.c.Queue().AddAfter(key, res.RequeueAfter)
	}
	return err
}

// queue is the controller's own work queue.
func (e *env) queue() *workqueue.RateLimitingQueue[string] {
	return e.c.Queue().(*workqueue.RateLimitingQueue[string]) //nolint:forcetypeassert // the driver's queue is ctrlkit's
}

func (e *env) requireCounts(creates, deletes, patches int) {
	e.t.Helper()
	c, d, p := e.pc.Counts()
	require.Equal(e.t, [3]int{creates, deletes, patches}, [3]int{c, d, p}, "creates, deletes, patches")
}

var fooBar = map[string]string{"foo": "bar"}

// newRS returns a ReplicaSet named name in default, controlled by a
// Deployment with UID "123", its template labelled like its selector.
func newRS(name string, replicas int32, selector map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{
			UID: uuid.NewUUID(), Name: name, Namespace: metav1.NamespaceDefault, ResourceVersion: "18",
			OwnerReferences: []metav1.OwnerReference{{UID: "123", Controller: ptr.To(true), Kind: "Deployment", Name: "d", APIVersion: "apps/v1"}},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "foo/bar"}}},
			},
		},
	}
}

var rsGVK = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// newPod returns a pod with labels in rs's namespace; owned makes rs its
// controller. Running pods are ready since a minute, on node-1.
func newPod(name string, rs *appsv1.ReplicaSet, phase v1.PodPhase, lbls map[string]string, owned bool) *v1.Pod {
	return testpods.New(name, rs, rsGVK, phase, lbls, owned)
}

func newPods(n int, prefix string, rs *appsv1.ReplicaSet, phase v1.PodPhase, lbls map[string]string, owned bool) []*v1.Pod {
	return testpods.NewN(n, prefix, rs, rsGVK, phase, lbls, owned)
}

func podNames(pods []*v1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}
