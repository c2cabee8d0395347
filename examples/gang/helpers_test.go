package gang_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/examples/gang"
)

const ns = "default"

// newGang returns a Gang called name keeping replicas pods (nil leaves the
// field out), whose template labels them role=rank.
func newGang(name string, replicas any) *unstructured.Unstructured {
	spec := map[string]any{
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"role": "rank"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": "trainer:1"}}},
		},
	}
	if replicas != nil {
		spec["replicas"] = replicas
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "examples.ctrlkit.io/v1alpha1", "kind": "Gang",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": name + "-uid"},
		"spec":     spec,
	}}
}

func newGangClient(gangs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gang.Resource: "GangList"}, gangs...)
}

// waitWatches waits until a fake client serves a watch of each resource.
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

// harness runs the Gang controller: pods on the typed fake clientset, Gangs
// on the dynamic fake client.
type harness struct {
	ctx    context.Context
	client *fake.Clientset
	dyn    *dynamicfake.FakeDynamicClient
	rec    *record.FakeRecorder
}

func start(t *testing.T, gangs, pods []runtime.Object, opts ...gang.Option) *harness {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h := &harness{ctx: ctx, client: fake.NewClientset(pods...), dyn: newGangClient(gangs...), rec: record.NewFakeRecorder(1000)}
	podFactory := informers.NewSharedInformerFactory(h.client, 0)
	gangFactory := dynamicinformer.NewDynamicSharedInformerFactory(h.dyn, 0)
	opts = append([]gang.Option{gang.WithEventRecorder(h.rec)}, opts...)
	c, err := gang.NewController(ctx, h.client, podFactory.Core().V1().Pods(), gangFactory, opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	podFactory.Start(ctx.Done())
	gangFactory.Start(ctx.Done())
	waitWatches(t, h.client.Actions, "pods")
	waitWatches(t, h.dyn.Actions, "gangs")
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
		podFactory.Shutdown()
		gangFactory.Shutdown()
	})
	return h
}

// podNames returns the API's pod names, sorted.
func (h *harness) podNames(t *testing.T) []string {
	t.Helper()
	list, err := h.client.CoreV1().Pods(ns).List(h.ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

func (h *harness) waitPods(t *testing.T, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Equal(h.podNames(t), want) }, 10*time.Second, 5*time.Millisecond,
		"want pods %v", want)
}

func (h *harness) pod(t *testing.T, name string) *v1.Pod {
	t.Helper()
	p, err := h.client.CoreV1().Pods(ns).Get(h.ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	return p
}

func (h *harness) scale(t *testing.T, name string, replicas int64) {
	t.Helper()
	api := h.dyn.Resource(gang.Resource).Namespace(ns)
	g, err := api.Get(h.ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(g.Object, replicas, "spec", "replicas"))
	_, err = api.Update(h.ctx, g, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// calls lists the names in the pod calls of verb, in call order.
func (h *harness) calls(verb string) []string {
	var out []string
	for _, a := range h.client.Actions() {
		if a.GetVerb() != verb || a.GetResource().Resource != "pods" {
			continue
		}
		switch a := a.(type) {
		case clienttesting.CreateAction:
			out = append(out, a.GetObject().(*v1.Pod).Name)
		case clienttesting.DeleteAction:
			out = append(out, a.GetName())
		case clienttesting.PatchAction:
			out = append(out, a.GetName())
		}
	}
	return out
}

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

// waitEvent waits for an event starting with prefix and returns it.
func (h *harness) waitEvent(t *testing.T, prefix string) string {
	t.Helper()
	var got string
	require.Eventually(t, func() bool {
		for _, e := range h.events() {
			if strings.HasPrefix(e, prefix) {
				got = e
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "an event %q", prefix)
	return got
}

func foreignPod(name string, labels map[string]string, controller *metav1.OwnerReference) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "foreign-uid", Labels: labels},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "other"}}},
	}
	if controller != nil {
		p.OwnerReferences = []metav1.OwnerReference{*controller}
	}
	return p
}
