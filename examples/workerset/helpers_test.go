package workerset_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/workerset"
)

const ns = "default"

// epoch is the creation time of the first Worker the fake client creates;
// each later one is a second younger, so the deletion order is known.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newFakeClient returns the dynamic fake client over objs, filling in for
// each created Worker what an apiserver would and the fake does not: a
// name from generateName, a UID and a creation timestamp.
func newFakeClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		workerset.SetResource: "WorkerSetList", workerset.WorkerResource: "WorkerList"}, objs...)
	var seq atomic.Int64
	dyn.PrependReactor("create", "workers", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj, ok := action.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured)
		if !ok {
			return false, nil, nil
		}
		i := seq.Add(1)
		if obj.GetName() == "" {
			obj.SetName(fmt.Sprintf("%s%03d", obj.GetGenerateName(), i))
		}
		obj.SetUID(types.UID(fmt.Sprintf("worker-uid-%d", i)))
		obj.SetCreationTimestamp(metav1.NewTime(epoch.Add(time.Duration(i) * time.Second)))
		return false, nil, nil
	})
	return dyn
}

// waitWatches waits until the fake client serves a watch of each resource.
// The fake tracker's watches start from "now", not from the list's
// resourceVersion: an object written between an informer's list and its
// watch would never reach the cache, so nothing is written before this.
func waitWatches(t *testing.T, actions func() []clienttesting.Action, resources ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, r := range resources {
			if !slices.ContainsFunc(actions(), func(a clienttesting.Action) bool {
				return a.GetVerb() == "watch" && a.GetResource().Resource == r
			}) {
				return false
			}
		}
		return true
	}, 10*time.Second, time.Millisecond, "watches of %v", resources)
}

// harness runs the WorkerSet controller over the dynamic fake client.
type harness struct {
	ctx     context.Context
	dyn     *dynamicfake.FakeDynamicClient
	rec     *record.FakeRecorder
	workers cache.Indexer // the controller's Worker cache
}

// start runs the controller over objs; the cleanup stops it and checks that
// every goroutine it started has exited.
func start(t *testing.T, objs []runtime.Object, opts ...workerset.Option) *harness {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h := &harness{ctx: ctx, dyn: newFakeClient(objs...), rec: record.NewFakeRecorder(1000)}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(h.dyn, 0)
	opts = append([]workerset.Option{workerset.WithEventRecorder(h.rec)}, opts...)
	c, err := workerset.NewController(ctx, h.dyn, factory, opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	h.workers = factory.ForResource(workerset.WorkerResource).Informer().GetIndexer()
	factory.Start(ctx.Done())
	waitWatches(t, h.dyn.Actions, "workersets", "workers")
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
		factory.Shutdown()
	})
	return h
}

func (h *harness) sets() dynamic.ResourceInterface {
	return h.dyn.Resource(workerset.SetResource).Namespace(ns)
}

func (h *harness) workerAPI() dynamic.ResourceInterface {
	return h.dyn.Resource(workerset.WorkerResource).Namespace(ns)
}

// listWorkers returns the API's Workers, oldest first.
func (h *harness) listWorkers(t *testing.T) []unstructured.Unstructured {
	t.Helper()
	list, err := h.workerAPI().List(h.ctx, metav1.ListOptions{})
	require.NoError(t, err)
	items := list.Items
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		if c := a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	return items
}

// waitWorkers waits until the API holds n Workers.
func (h *harness) waitWorkers(t *testing.T, n int) []unstructured.Unstructured {
	t.Helper()
	require.Eventually(t, func() bool { return len(h.listWorkers(t)) == n }, 10*time.Second, 5*time.Millisecond,
		"want %d Workers", n)
	return h.listWorkers(t)
}

func (h *harness) scale(t *testing.T, name string, replicas int64) {
	t.Helper()
	set, err := h.sets().Get(h.ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(set.Object, replicas, "spec", "replicas"))
	_, err = h.sets().Update(h.ctx, set, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// calls lists the fake client's calls of verb on Workers: the name
// (generateName for a create without one) of each.
func (h *harness) calls(verb string) []string {
	var out []string
	for _, a := range h.dyn.Actions() {
		if a.GetVerb() != verb || a.GetResource().Resource != "workers" {
			continue
		}
		switch a := a.(type) {
		case clienttesting.CreateAction:
			// The recorded copy predates the reactor that names it.
			obj := a.GetObject().(*unstructured.Unstructured)
			out = append(out, obj.GetName()+obj.GetGenerateName())
		case clienttesting.DeleteAction:
			out = append(out, a.GetName())
		default:
			out = append(out, verb)
		}
	}
	return out
}

// events drains the recorder.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// newSet returns a WorkerSet called name keeping replicas Workers (nil
// leaves the field out) labelled app=name.
func newSet(name string, replicas any) *unstructured.Unstructured {
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec":     map[string]any{"image": "worker:1", "cpus": int64(2)},
		},
	}
	if replicas != nil {
		spec["replicas"] = replicas
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "examples.ctrlkit.io/v1alpha1", "kind": "WorkerSet",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": name + "-uid"},
		"spec":     spec,
	}}
}

// newWorker returns a Worker with no owner.
func newWorker(name string, labels map[string]string) *unstructured.Unstructured {
	w := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"image": "worker:0"},
	}}
	w.SetGroupVersionKind(workerset.WorkerKind)
	w.SetNamespace(ns)
	w.SetName(name)
	w.SetUID(types.UID(name + "-uid"))
	w.SetLabels(labels)
	w.SetCreationTimestamp(metav1.NewTime(epoch))
	return w
}

// setReady writes status.ready of the named Worker and waits until the
// controller's cache shows it, so a decision that follows sees it.
func (h *harness) setReady(t *testing.T, name string, ready bool) {
	t.Helper()
	w, err := h.workerAPI().Get(h.ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(w.Object, ready, "status", "ready"))
	_, err = h.workerAPI().Update(h.ctx, w, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		obj, ok, _ := h.workers.GetByKey(ns + "/" + name)
		return ok && (workerset.Workers{}).Ready(obj.(*unstructured.Unstructured)) == ready
	}, 10*time.Second, time.Millisecond, "cache shows %s ready=%v", name, ready)
}

var _ childset.Kind[*unstructured.Unstructured] = workerset.Workers{}
