package replicaset

import (
	"context"
	"fmt"
	"maps"

	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/testpods"
	"github.com/ctrlkit/ctrlkit/internal/trimtest"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/podset"
)

// testKind builds owners and controllers of one kind, so that a scenario
// written once runs for both ReplicaSets and ReplicationControllers.
type testKind struct {
	name           string
	gvk            schema.GroupVersionKind
	statusResource string
	// newOwner returns an owner named foobar in namespace default with a
	// controller ownerRef (UID "123"), like upstream's fixture.
	newOwner func(replicas int32, selector map[string]string) metav1.Object
	// build constructs the controller on the factory's informers.
	build func(ctx context.Context, client *fake.Clientset, f informers.SharedInformerFactory, opts ...Option) (*Controller, error)
	// store is the owner informer's store, to place owners in the cache.
	store func(f informers.SharedInformerFactory) cache.Indexer
	// setStatus writes replicas/ready/available into an owner's status.
	setStatus func(obj metav1.Object, replicas, ready, available int32)
	// failureReason returns the ReplicaFailure condition's reason in a
	// status written to the API, or "" when absent.
	failureReason func(obj runtime.Object) string
}

var (
	rsKind = testKind{
		name:           "ReplicaSet",
		gvk:            appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
		statusResource: "replicasets",
		newOwner: func(replicas int32, selector map[string]string) metav1.Object {
			return &appsv1.ReplicaSet{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
				ObjectMeta: ownerMeta(),
				Spec: appsv1.ReplicaSetSpec{
					Replicas: ptr.To(replicas),
					Selector: &metav1.LabelSelector{MatchLabels: selector},
					Template: testTemplate(selector),
				},
			}
		},
		build: func(ctx context.Context, client *fake.Clientset, f informers.SharedInformerFactory, opts ...Option) (*Controller, error) {
			return NewReplicaSetController(ctx, client, f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(), opts...)
		},
		store: func(f informers.SharedInformerFactory) cache.Indexer {
			return f.Apps().V1().ReplicaSets().Informer().GetIndexer()
		},
		setStatus: func(obj metav1.Object, replicas, ready, available int32) {
			rs := obj.(*appsv1.ReplicaSet)
			rs.Status.Replicas, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = replicas, ready, available
			rs.Status.FullyLabeledReplicas = 0
			rs.Status.TerminatingReplicas = ptr.To[int32](0)
		},
		failureReason: func(obj runtime.Object) string {
			for _, c := range obj.(*appsv1.ReplicaSet).Status.Conditions {
				if c.Type == appsv1.ReplicaSetReplicaFailure {
					return c.Reason
				}
			}
			return ""
		},
	}
	rcKind = testKind{
		name:           "ReplicationController",
		gvk:            v1.SchemeGroupVersion.WithKind("ReplicationController"),
		statusResource: "replicationcontrollers",
		newOwner: func(replicas int32, selector map[string]string) metav1.Object {
			t := testTemplate(selector)
			return &v1.ReplicationController{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
				ObjectMeta: ownerMeta(),
				Spec: v1.ReplicationControllerSpec{
					Replicas: ptr.To(replicas),
					Selector: selector,
					Template: &t,
				},
			}
		},
		build: func(ctx context.Context, client *fake.Clientset, f informers.SharedInformerFactory, opts ...Option) (*Controller, error) {
			return NewReplicationManager(ctx, client, f.Core().V1().Pods(), f.Core().V1().ReplicationControllers(), opts...)
		},
		store: func(f informers.SharedInformerFactory) cache.Indexer {
			return f.Core().V1().ReplicationControllers().Informer().GetIndexer()
		},
		setStatus: func(obj metav1.Object, replicas, ready, available int32) {
			rc := obj.(*v1.ReplicationController)
			rc.Status.Replicas, rc.Status.ReadyReplicas, rc.Status.AvailableReplicas = replicas, ready, available
			rc.Status.FullyLabeledReplicas = 0
		},
		failureReason: func(obj runtime.Object) string {
			for _, c := range obj.(*v1.ReplicationController).Status.Conditions {
				if c.Type == v1.ReplicationControllerReplicaFailure {
					return c.Reason
				}
			}
			return ""
		},
	}
	bothKinds = []testKind{rsKind, rcKind}
)

func ownerMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		UID:             uuid.NewUUID(),
		Name:            "foobar",
		Namespace:       metav1.NamespaceDefault,
		OwnerReferences: []metav1.OwnerReference{{UID: "123", Controller: ptr.To(true), Kind: "Deployment", Name: "d", APIVersion: "apps/v1"}},
		ResourceVersion: "18",
	}
}

// testTemplate's labels are upstream's fixture's, {name: foo, type:
// production}, plus the selector's, so that the selector matches them as the
// API's validation requires (upstream's unit fixture leaves them apart, which
// the controller now refuses), while pods labelled with the selector alone
// still exercise fullyLabeledReplicas.
func testTemplate(selector map[string]string) v1.PodTemplateSpec {
	labels := map[string]string{"name": "foo", "type": "production"}
	maps.Copy(labels, selector)
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: v1.PodSpec{
			Containers:    []v1.Container{{Name: "c", Image: "foo/bar"}},
			RestartPolicy: v1.RestartPolicyAlways,
		},
	}
}

// env is one controller under test: its clientset, informers (never
// started: the test fills the caches directly) and fake pod control.
type env struct {
	t      *testing.T
	kind   testKind
	ctx    context.Context
	client *fake.Clientset
	inf    informers.SharedInformerFactory
	pc     *podcontrol.FakePodControl
	c      *Controller
	rec    *record.FakeRecorder
}

func newEnv(t *testing.T, k testKind, objects []runtime.Object, opts ...Option) *env {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewSimpleClientset(objects...)
	f := informers.NewSharedInformerFactory(client, 0)
	if trimtest.Enabled() {
		require.NoError(t, f.Core().V1().Pods().Informer().SetTransform(podset.TrimPod))
	}
	pc := &podcontrol.FakePodControl{}
	rec := record.NewFakeRecorder(100)
	all := append([]Option{podset.WithPodControl(pc), podset.WithEventRecorder(rec)}, opts...)
	c, err := k.build(ctx, client, f, all...)
	require.NoError(t, err)
	return &env{t: t, kind: k, ctx: ctx, client: client, inf: f, pc: pc, c: c, rec: rec}
}

// newEnvWithOwner returns an env whose cache and API both hold owner.
func newEnvWithOwner(t *testing.T, k testKind, owner metav1.Object, opts ...Option) *env {
	t.Helper()
	e := newEnv(t, k, []runtime.Object{owner.(runtime.Object)}, opts...)
	e.addOwner(owner)
	return e
}

func (e *env) addOwner(o metav1.Object) {
	require.NoError(e.t, e.kind.store(e.inf).Add(o))
}

func (e *env) podStore() cache.Indexer { return e.inf.Core().V1().Pods().Informer().GetIndexer() }

func (e *env) addPods(pods ...*v1.Pod) {
	for _, p := range pods {
		require.NoError(e.t, e.podStore().Add(trimtest.Pod(e.t, p, podset.TrimPod)))
	}
}

// sync reconciles o as a worker would, queueing it again when the Result
// asks for it, and returns the error.
func (e *env) sync(o metav1.Object) error {
	res, err := e.c.Reconcile(e.ctx, key(o))
	if res.RequeueAfter > 0 {
		e.c.Queue().AddAfter(key(o), res.RequeueAfter)
	}
	return err
}

func (e *env) counts() (creates, deletes, patches int) { return e.pc.Counts() }

func (e *env) requireCounts(creates, deletes, patches int) {
	e.t.Helper()
	c, d, p := e.counts()
	require.Equal(e.t, [3]int{creates, deletes, patches}, [3]int{c, d, p}, "creates, deletes, patches")
}

// statusUpdates counts UpdateStatus calls on the owner kind.
func (e *env) statusUpdates() int {
	n := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" && a.GetResource().Resource == e.kind.statusResource {
			n++
		}
	}
	return n
}

// requireAsleep checks the owner still waits for add creations and del
// deletions, and that a sync meanwhile does nothing to its pods.
func (e *env) requireAsleep(o metav1.Object, add, del int64) {
	e.t.Helper()
	exp, ok, err := e.c.Expectations().GetExpectations(e.expKey(o))
	require.NoError(e.t, err)
	require.True(e.t, ok, "expectations recorded")
	gotAdd, gotDel := exp.GetExpectations()
	require.Equal(e.t, [2]int64{add, del}, [2]int64{gotAdd, gotDel}, "pending (add, del)")
	e.pc.Clear()
	require.NoError(e.t, e.sync(o))
	e.requireCounts(0, 0, 0)
}

func (e *env) expKey(o metav1.Object) string { return expectations.OwnerKeyFor(o) }

func key(o metav1.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// newPod returns a pod selected by labels; owned makes o its controller.
func newPod(name string, o metav1.Object, k testKind, phase v1.PodPhase, labels map[string]string, owned bool) *v1.Pod {
	return testpods.New(name, o, k.gvk, phase, labels, owned)
}

func newPods(n int, prefix string, o metav1.Object, k testKind, phase v1.PodPhase, labels map[string]string, owned bool) []*v1.Pod {
	return testpods.NewN(n, prefix, o, k.gvk, phase, labels, owned)
}

// queued drains the controller's queue without syncing and returns the keys
// in it, sorted by arrival.
func queued(c *Controller) []string {
	var keys []string
	for c.Queue().Len() > 0 {
		k, _ := c.Queue().Get()
		keys = append(keys, k)
		c.Queue().Done(k)
	}
	return keys
}

// failStatusUpdates makes every status update fail.
func failStatusUpdates(client *fake.Clientset) {
	client.PrependReactor("update", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			return true, nil, fmt.Errorf("fake status update error")
		}
		return false, nil, nil
	})
}

var _ = types.UID("")
