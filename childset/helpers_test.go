package childset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// The tests' owner is a ReplicaSet whose children are ConfigMaps: a clear
// stand-in for any owner kind and any child kind.

const ns = "default"

var rsGVK = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

type rsSpec struct{ owners cache.Indexer }

func (s rsSpec) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	obj, ok, err := s.owners.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "replicasets"}, name)
	}
	return obj.(*appsv1.ReplicaSet), nil
}

func (rsSpec) GroupVersionKind() schema.GroupVersionKind { return rsGVK }

func (rsSpec) Replicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func (rsSpec) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
}

func (rsSpec) NewChild(rs *appsv1.ReplicaSet) (*v1.ConfigMap, error) {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Labels: rs.Spec.Template.Labels},
		Data:       map[string]string{"owner": rs.Name},
	}, nil
}

// cmKind reads ConfigMaps from an indexer; a ConfigMap is ready when its
// "ready" annotation says "true".
type cmKind struct {
	childset.Lister[*v1.ConfigMap]
}

func (cmKind) Ready(cm *v1.ConfigMap) bool { return cm.Annotations["ready"] == "true" }

func newOwner(name string, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}},
		},
	}
}

func newChild(name string, owner *appsv1.ReplicaSet, lbls map[string]string) *v1.ConfigMap {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid"), Labels: lbls}}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, rsGVK)}
	}
	return cm
}

// env is a core over a simulated API and informer stores the test fills
// by hand: a store shows only what the test delivered, which is how a
// lagging cache looks.
type env struct {
	t        *testing.T
	cluster  *simcluster.Cluster
	client   *fake.Clientset
	owners   cache.Indexer
	children cache.Indexer
	recorder *record.FakeRecorder
	clock    *clocktesting.FakeClock
	r        *childset.Reconciler[*appsv1.ReplicaSet, *v1.ConfigMap]
}

func newEnv(t *testing.T, opts ...childset.Option) *env {
	t.Helper()
	e := &env{t: t, cluster: simcluster.New(), recorder: record.NewFakeRecorder(100),
		clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	e.client = e.cluster.Client()
	e.owners = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	e.children = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{childset.ControllerIndex: claim.IndexByController})
	e.r = childset.NewReconciler(rsSpec{e.owners}, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
		configMapControl(e.client, nil),
		append([]childset.Option{childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock)}, opts...)...)
	return e
}

func configMapControl(client kubernetes.Interface, recorder record.EventRecorder) *objectcontrol.Control[*v1.ConfigMap] {
	return objectcontrol.New("ConfigMap", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.ConfigMap] { return client.CoreV1().ConfigMaps(ns) }),
		recorder, types.StrategicMergePatchType)
}

func (e *env) addOwner(rs *appsv1.ReplicaSet) {
	e.t.Helper()
	if err := e.owners.Add(rs); err != nil {
		e.t.Fatal(err)
	}
}

// seed puts children in the API and in the cache.
func (e *env) seed(cms ...*v1.ConfigMap) {
	e.t.Helper()
	for _, cm := range cms {
		if err := e.cluster.Add(cm.DeepCopy()); err != nil {
			e.t.Fatal(err)
		}
		if err := e.children.Add(cm); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) reconcile(name string) childset.Result {
	e.t.Helper()
	res, err := e.r.Reconcile(context.Background(), ns+"/"+name)
	if err != nil {
		e.t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// catchUp delivers the API's ConfigMaps to the cache, as an informer
// would: adds, updates and deletions, each observed by the core.
func (e *env) catchUp() {
	e.t.Helper()
	live := map[string]bool{}
	for _, cm := range e.apiChildren() {
		live[cm.Name] = true
		if _, ok, _ := e.children.GetByKey(ns + "/" + cm.Name); !ok {
			if err := e.children.Add(cm); err != nil {
				e.t.Fatal(err)
			}
			e.r.ObserveAdd(cm)
		} else {
			old, _, _ := e.children.GetByKey(ns + "/" + cm.Name)
			if err := e.children.Update(cm); err != nil {
				e.t.Fatal(err)
			}
			e.r.ObserveUpdate(old.(*v1.ConfigMap), cm)
		}
	}
	for _, obj := range e.children.List() {
		cm := obj.(*v1.ConfigMap)
		if !live[cm.Name] {
			if err := e.children.Delete(cm); err != nil {
				e.t.Fatal(err)
			}
			e.r.ObserveDelete(cm, false)
		}
	}
}

func (e *env) apiChildren() []*v1.ConfigMap {
	e.t.Helper()
	list, err := e.client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]*v1.ConfigMap, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

func (e *env) apiNames() []string {
	var names []string
	for _, cm := range e.apiChildren() {
		names = append(names, cm.Name)
	}
	slices.Sort(names)
	return names
}

// writes lists the ConfigMap writes sent so far as "verb name" (the
// generated name is empty for creates by generateName).
func (e *env) writes() []string {
	var out []string
	for _, a := range e.client.Actions() {
		if a.GetResource().Resource != "configmaps" {
			continue
		}
		// By verb: an update action also has the methods of a create
		// action.
		switch a.GetVerb() {
		case "create":
			out = append(out, "create "+a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName())
		case "delete":
			out = append(out, "delete "+a.(k8stesting.DeleteAction).GetName())
		case "patch":
			out = append(out, "patch "+a.(k8stesting.PatchAction).GetName())
		}
	}
	return out
}

func (e *env) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.recorder.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

func names(prefix string, indices ...int) []string {
	out := make([]string, len(indices))
	for i, idx := range indices {
		out[i] = fmt.Sprintf("%s-%d", prefix, idx)
	}
	return out
}
