package workerset_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/workerset"
)

var (
	_ childset.RolloutSpec[*unstructured.Unstructured]                      = workerset.RollingSet{}
	_ childset.StatusSpec[*unstructured.Unstructured]                       = workerset.RollingSet{}
	_ childset.MinReadySpec[*unstructured.Unstructured]                     = workerset.RollingSet{}
	_ childset.ReadySinceKind[*unstructured.Unstructured]                   = workerset.Workers{}
	_ childset.Spec[*unstructured.Unstructured, *unstructured.Unstructured] = workerset.RollingSet{}
)

func TestRollingSetSpec(t *testing.T) {
	s := workerset.RollingSet{}
	set := newSet("a", int64(4))
	u, on := s.RollingUpdate(set)
	assert.True(t, on)
	assert.Equal(t, childset.RollingUpdate{}, u, "absent: Deployment's defaults")
	assert.EqualValues(t, 10, s.RevisionHistoryLimit(set), "absent: 10")
	assert.EqualValues(t, 0, s.MinReadySeconds(set))
	assert.EqualValues(t, 0, *s.CollisionCount(set), "absent: 0")

	spec := set.Object["spec"].(map[string]any)
	spec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0), "partition": int64(2)}}
	spec["revisionHistoryLimit"], spec["minReadySeconds"] = int64(3), int64(5)
	set.Object["status"] = map[string]any{"collisionCount": int64(1)}
	u, on = s.RollingUpdate(set)
	assert.True(t, on)
	surge, zero := intstr.FromString("25%"), intstr.FromInt32(0)
	assert.Equal(t, childset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &zero, Partition: 2}, u)
	assert.EqualValues(t, 3, s.RevisionHistoryLimit(set))
	assert.EqualValues(t, 5, s.MinReadySeconds(set))
	assert.EqualValues(t, 1, *s.CollisionCount(set))
	_, err := s.NewChild(set)
	require.NoError(t, err)

	for want, mutate := range map[string]func(spec map[string]any){
		`spec.strategy.rollingUpdate: invalid rolling update: maxSurge "lots"`: func(spec map[string]any) {
			spec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": "lots"}}
		},
		"maxSurge and maxUnavailable may not both be 0": func(spec map[string]any) {
			spec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": "0%"}}
		},
		"spec.revisionHistoryLimit must be between 0 and": func(spec map[string]any) { spec["revisionHistoryLimit"] = int64(-1) },
		"spec.minReadySeconds must be an integer":         func(spec map[string]any) { spec["minReadySeconds"] = "5s" },
		"spec.replicas must be an integer":                func(spec map[string]any) { spec["replicas"] = true },
	} {
		bad := newSet("a", int64(1))
		mutate(bad.Object["spec"].(map[string]any))
		_, err := s.NewChild(bad)
		assert.ErrorContains(t, err, want)
	}
}

func TestWorkersReadySince(t *testing.T) {
	k := workerset.Workers{}
	w := newWorker("w", nil)
	assert.True(t, k.ReadySince(w).IsZero(), "absent")
	require.NoError(t, unstructured.SetNestedField(w.Object, "2026-01-01T00:00:05Z", "status", "readySince"))
	assert.Equal(t, epoch.Add(5*time.Second), k.ReadySince(w).UTC())
	require.NoError(t, unstructured.SetNestedField(w.Object, "yesterday", "status", "readySince"))
	assert.True(t, k.ReadySince(w).IsZero(), "malformed")
	require.NoError(t, unstructured.SetNestedField(w.Object, int64(5), "status", "readySince"))
	assert.True(t, k.ReadySince(w).IsZero(), "not a string")
}

// startRolling runs the controller with rolling updates, its revisions in
// a fake clientset; it returns that clientset.
func startRolling(t *testing.T, objs ...runtime.Object) (*harness, *fake.Clientset) {
	t.Helper()
	kube := fake.NewClientset()
	typed := informers.NewSharedInformerFactory(kube, 0)
	h := start(t, objs, workerset.WithRollingUpdates(kube, typed.Apps().V1().ControllerRevisions()))
	ctx, cancel := context.WithCancel(context.Background())
	typed.Start(ctx.Done())
	typed.WaitForCacheSync(ctx.Done())
	t.Cleanup(func() {
		cancel()
		typed.Shutdown()
	})
	return h, kube
}

// markAllReady sets every Worker in the API ready; it reports how many it
// changed.
func (h *harness) markAllReady(t *testing.T) int {
	t.Helper()
	n := 0
	for _, w := range h.listWorkers(t) {
		if ready, _, _ := unstructured.NestedBool(w.Object, "status", "ready"); ready {
			continue
		}
		require.NoError(t, unstructured.SetNestedField(w.Object, true, "status", "ready"))
		require.NoError(t, unstructured.SetNestedField(w.Object, time.Now().UTC().Format(time.RFC3339), "status", "readySince"))
		// The fake keeps no resourceVersions; the informer ignores an
		// update that does not change it.
		w.SetResourceVersion(w.GetResourceVersion() + "r")
		if _, err := h.workerAPI().Update(h.ctx, &w, metav1.UpdateOptions{}); err == nil {
			n++
		}
	}
	return n
}

// A template change rolls 4 Workers out one at a time (maxSurge 1,
// maxUnavailable 0): never more than 5 Workers; the status follows; a
// rollback reuses the first revision.
func TestRollingUpdateRollsOutAndBack(t *testing.T) {
	set := newSet("web", int64(4))
	set.Object["spec"].(map[string]any)["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(1), "maxUnavailable": int64(0)}}
	h, kube := startRolling(t, set)

	roll := func(image string) {
		t.Helper()
		maxSeen := 0
		require.Eventually(t, func() bool {
			h.markAllReady(t)
			workers := h.listWorkers(t)
			maxSeen = max(maxSeen, len(workers))
			if len(workers) != 4 {
				return false
			}
			for _, w := range workers {
				if got, _, _ := unstructured.NestedString(w.Object, "spec", "image"); got != image {
					return false
				}
			}
			got, err := h.sets().Get(h.ctx, "web", metav1.GetOptions{})
			require.NoError(t, err)
			updated, _, _ := unstructured.NestedInt64(got.Object, "status", "updatedReplicas")
			avail, _, _ := unstructured.NestedInt64(got.Object, "status", "availableReplicas")
			cur, _, _ := unstructured.NestedString(got.Object, "status", "currentRevision")
			upd, _, _ := unstructured.NestedString(got.Object, "status", "updateRevision")
			return updated == 4 && avail == 4 && cur == upd && cur != ""
		}, 20*time.Second, 10*time.Millisecond, "rolled out to %s", image)
		assert.LessOrEqual(t, maxSeen, 5, "maxSurge 1")
	}
	setImage := func(image string) {
		t.Helper()
		got, err := h.sets().Get(h.ctx, "web", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(got.Object, image, "spec", "template", "spec", "image"))
		_, err = h.sets().Update(h.ctx, got, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	revisions := func() int {
		list, err := kube.AppsV1().ControllerRevisions(ns).List(h.ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return len(list.Items)
	}
	roll("worker:1")
	first, err := h.sets().Get(h.ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	firstRev, _, _ := unstructured.NestedString(first.Object, "status", "updateRevision")
	assert.Equal(t, 1, revisions())

	setImage("worker:2")
	roll("worker:2")
	assert.Equal(t, 2, revisions())

	setImage("worker:1")
	roll("worker:1")
	assert.Equal(t, 2, revisions(), "the rollback reuses the first revision")
	back, err := h.sets().Get(h.ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	backRev, _, _ := unstructured.NestedString(back.Object, "status", "updateRevision")
	assert.Equal(t, firstRev, backRev)
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
	err := workerset.RollingSet{}.UpdateStatus(context.Background(), newSet("a", int64(1)), childset.Status{Replicas: 1})
	require.ErrorContains(t, err, "no Client to write the status with")
}
