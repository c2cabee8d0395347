package gang_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/gang"
)

var (
	_ childset.RolloutSpec[*unstructured.Unstructured]  = gang.RollingGangs{}
	_ childset.StatusSpec[*unstructured.Unstructured]   = gang.RollingGangs{}
	_ childset.MinReadySpec[*unstructured.Unstructured] = gang.RollingGangs{}
	_ childset.ReadySinceKind[*v1.Pod]                  = gang.Pods{}
)

func TestRollingGangsSpec(t *testing.T) {
	g := gang.RollingGangs{}
	obj := newGang("g", int64(4))
	u, on := g.RollingUpdate(obj)
	assert.True(t, on)
	assert.Equal(t, childset.RollingUpdate{}, u, "absent: Deployment's defaults")
	assert.EqualValues(t, 10, g.RevisionHistoryLimit(obj))
	assert.EqualValues(t, 0, g.MinReadySeconds(obj))
	assert.EqualValues(t, 0, *g.CollisionCount(obj))

	spec := obj.Object["spec"].(map[string]any)
	spec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": "10%", "partition": int64(3)}}
	spec["revisionHistoryLimit"], spec["minReadySeconds"] = int64(2), int64(7)
	obj.Object["status"] = map[string]any{"collisionCount": int64(2)}
	u, _ = g.RollingUpdate(obj)
	zero, ten := intstr.FromInt32(0), intstr.FromString("10%")
	assert.Equal(t, childset.RollingUpdate{MaxSurge: &zero, MaxUnavailable: &ten, Partition: 3}, u)
	assert.EqualValues(t, 2, g.RevisionHistoryLimit(obj))
	assert.EqualValues(t, 7, g.MinReadySeconds(obj))
	assert.EqualValues(t, 2, *g.CollisionCount(obj))
	_, err := g.NewChild(obj)
	require.NoError(t, err)

	for want, mutate := range map[string]func(spec map[string]any){
		"maxUnavailable \"150%\": must not be greater than 100%": func(spec map[string]any) {
			spec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": "150%"}}
		},
		"spec.strategy.rollingUpdate.partition must be between": func(spec map[string]any) {
			spec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"partition": int64(-1)}}
		},
		"spec.strategy.rollingUpdate must be an object": func(spec map[string]any) { spec["strategy"] = map[string]any{"rollingUpdate": "fast"} },
		"spec.minReadySeconds must be a whole number":   func(spec map[string]any) { spec["minReadySeconds"] = 1.5 },
		"spec.template is missing":                      func(spec map[string]any) { delete(spec, "template") },
	} {
		bad := newGang("g", int64(1))
		mutate(bad.Object["spec"].(map[string]any))
		_, err := g.NewChild(bad)
		assert.ErrorContains(t, err, want)
	}
}

func TestPodsReadySince(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pod := &v1.Pod{}
	assert.True(t, gang.Pods{}.ReadySince(pod).IsZero())
	pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: at}}
	assert.Equal(t, at.Time, gang.Pods{}.ReadySince(pod))
	pod.Status.Conditions[0].Status = v1.ConditionFalse
	assert.True(t, gang.Pods{}.ReadySince(pod).IsZero(), "not ready")
}

// startRolling runs the controller with rolling updates, its revisions in
// the pods' fake clientset.
func startRolling(t *testing.T, gangs ...runtime.Object) *harness {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h := &harness{ctx: ctx, client: fake.NewClientset(), dyn: newGangClient(gangs...), rec: record.NewFakeRecorder(1000)}
	typed := informers.NewSharedInformerFactory(h.client, 0)
	gangFactory := dynamicinformer.NewDynamicSharedInformerFactory(h.dyn, 0)
	c, err := gang.NewController(ctx, h.client, typed.Core().V1().Pods(), gangFactory, gang.WithEventRecorder(h.rec),
		gang.WithRollingUpdates(h.dyn, typed.Apps().V1().ControllerRevisions()))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	typed.Start(ctx.Done())
	gangFactory.Start(ctx.Done())
	typed.WaitForCacheSync(ctx.Done())
	waitWatches(t, h.client.Actions, "pods", "controllerrevisions")
	waitWatches(t, h.dyn.Actions, "gangs")
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
		typed.Shutdown()
		gangFactory.Shutdown()
	})
	return h
}

// markAllReady sets the Ready condition of every pod in the API, as a
// kubelet would.
func (h *harness) markAllReady(t *testing.T) {
	t.Helper()
	list, err := h.client.CoreV1().Pods(ns).List(h.ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range list.Items {
		if len(p.Status.Conditions) > 0 {
			continue
		}
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		// The fake keeps no resourceVersions; the informer ignores an
		// update that does not change it.
		p.ResourceVersion += "r"
		_, _ = h.client.CoreV1().Pods(ns).UpdateStatus(h.ctx, &p, metav1.UpdateOptions{})
	}
}

// A template change rolls 4 indexed pods out in place (maxSurge 0,
// maxUnavailable 1), each index at most once live; a partition of 2 keeps
// indices 0 and 1 at the old template; the rollback reuses the revision.
func TestRollingGangRollsIndices(t *testing.T) {
	g := newGang("g", int64(4))
	g.Object["spec"].(map[string]any)["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": int64(1)}}
	h := startRolling(t, g)
	api := h.dyn.Resource(gang.Resource).Namespace(ns)

	// wait waits until the pods are g-0..g-3, each with the image want
	// gives its index, and the status is settled: every pod available and
	// updated of them at the update revision. Pod images alone are not
	// enough: the status the last sync wrote may predate the last pod.
	wait := func(updated int64, want func(i int) string) {
		t.Helper()
		require.Eventually(t, func() bool {
			h.markAllReady(t)
			list, err := h.client.CoreV1().Pods(ns).List(h.ctx, metav1.ListOptions{})
			require.NoError(t, err)
			if len(list.Items) != 4 {
				return false
			}
			for _, p := range list.Items {
				i, err := strconv.Atoi(p.Labels[childset.IndexLabel])
				if err != nil || p.Name != fmt.Sprintf("g-%d", i) || p.Spec.Containers[0].Image != want(i) {
					return false
				}
			}
			got, err := api.Get(h.ctx, "g", metav1.GetOptions{})
			require.NoError(t, err)
			avail, _, _ := unstructured.NestedInt64(got.Object, "status", "availableReplicas")
			upd, _, _ := unstructured.NestedInt64(got.Object, "status", "updatedReplicas")
			return avail == 4 && upd == updated
		}, 20*time.Second, 10*time.Millisecond, "pods at the wanted images")
	}
	update := func(image string, partition int64) {
		t.Helper()
		got, err := api.Get(h.ctx, "g", metav1.GetOptions{})
		require.NoError(t, err)
		containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = image
		require.NoError(t, unstructured.SetNestedSlice(got.Object, containers, "spec", "template", "spec", "containers"))
		require.NoError(t, unstructured.SetNestedField(got.Object, partition, "spec", "strategy", "rollingUpdate", "partition"))
		_, err = api.Update(h.ctx, got, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	revisions := func() int {
		list, err := h.client.AppsV1().ControllerRevisions(ns).List(h.ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return len(list.Items)
	}
	wait(4, func(int) string { return "trainer:1" })
	update("trainer:2", 2)
	wait(2, func(i int) string {
		if i < 2 {
			return "trainer:1"
		}
		return "trainer:2"
	})
	assert.Equal(t, 2, revisions())
	update("trainer:2", 0)
	wait(4, func(int) string { return "trainer:2" })
	update("trainer:1", 0)
	wait(4, func(int) string { return "trainer:1" })
	assert.Equal(t, 2, revisions(), "the rollback reuses the first revision")
	got, err := api.Get(h.ctx, "g", metav1.GetOptions{})
	require.NoError(t, err)
	status, _, _ := unstructured.NestedMap(got.Object, "status")
	assert.Equal(t, status["currentRevision"], status["updateRevision"])
	assert.EqualValues(t, 4, status["updatedReplicas"])
	for _, e := range h.events() {
		assert.NotContains(t, e, "Warning", "no Warning event")
	}
}

// TestRollingSizeMatchesDoc recounts rolling.go's code lines and checks
// doc.go states it.
func TestRollingSizeMatchesDoc(t *testing.T) {
	n := adapterLines(t, "rolling.go")
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`(\d+) more lines without comments`).FindSubmatch(doc)
	require.NotNil(t, m, "doc.go states rolling.go's size")
	stated, _ := strconv.Atoi(string(m[1]))
	assert.Equal(t, n, stated, "doc.go says %d lines, rolling.go has %d", stated, n)
}

// A RollingSet built without a Client reports it; it does not panic.
func TestRollingStatusWithoutClient(t *testing.T) {
	err := gang.RollingGangs{}.UpdateStatus(context.Background(), newGang("g", int64(1)), childset.Status{Replicas: 1})
	require.ErrorContains(t, err, "no Client to write the status with")
}
