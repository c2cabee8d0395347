package workerset_test

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/workerset"
)

var (
	_ childset.UpdateStrategySpec[*unstructured.Unstructured] = workerset.RollingSet{}
	_ childset.InPlaceKind[*unstructured.Unstructured]        = workerset.Workers{}
)

func TestWorkersInPlaceUpdate(t *testing.T) {
	k := workerset.Workers{}
	worker := func(spec any) *unstructured.Unstructured {
		w := newWorker("w", map[string]string{"app": "a"})
		w.Object["spec"] = spec
		return w
	}
	from := worker(map[string]any{"image": "worker:1", "cpus": int64(2)})

	patches, ok := k.InPlaceUpdate(from, worker(map[string]any{"image": "worker:2", "cpus": int64(2)}))
	require.True(t, ok, "an image change is made in place")
	require.Len(t, patches, 1)
	assert.Equal(t, types.MergePatchType, patches[0].Type)
	assert.Empty(t, patches[0].Subresource)
	assert.JSONEq(t, `{"spec":{"image":"worker:2"}}`, string(patches[0].Data))

	patches, ok = k.InPlaceUpdate(from, worker(map[string]any{"cpus": int64(2)}))
	require.True(t, ok, "a dropped image is removed in place")
	assert.JSONEq(t, `{"spec":{"image":null}}`, string(patches[0].Data))

	_, ok = k.InPlaceUpdate(from, worker(map[string]any{"image": "worker:2", "cpus": int64(4)}))
	assert.False(t, ok, "any other spec change recreates")
	relabelled := worker(map[string]any{"image": "worker:2", "cpus": int64(2)})
	relabelled.SetLabels(map[string]string{"app": "b"})
	_, ok = k.InPlaceUpdate(from, relabelled)
	assert.False(t, ok, "a label change recreates")
	_, ok = k.InPlaceUpdate(from, worker("not an object"))
	assert.False(t, ok, "a malformed spec recreates")

	w := worker(map[string]any{"image": "worker:2"})
	assert.True(t, k.InPlaceDone(w), "an agent that reports no image is taken at its word")
	require.NoError(t, unstructured.SetNestedField(w.Object, "worker:1", "status", "image"))
	assert.False(t, k.InPlaceDone(w), "still running the old image")
	require.NoError(t, unstructured.SetNestedField(w.Object, "worker:2", "status", "image"))
	assert.True(t, k.InPlaceDone(w))

	set := newSet("a", int64(1))
	assert.Equal(t, childset.UpdateStrategy(""), workerset.RollingSet{}.UpdateStrategy(set), "absent: the core's Recreate")
	set.Object["spec"].(map[string]any)["strategy"] = map[string]any{"type": "InPlaceOnly"}
	assert.Equal(t, childset.InPlaceOnly, workerset.RollingSet{}.UpdateStrategy(set))
}

// runImages stands in for the Workers' agents, one step behind: a Worker
// whose spec.image its status does not report is left for this call if
// it is new to lagging, and reported ready at that image on the next. It
// returns how many Workers are available (ready and running spec.image).
func (h *harness) runImages(t *testing.T, lagging map[string]string) int {
	t.Helper()
	available := 0
	for _, w := range h.listWorkers(t) {
		want, _, _ := unstructured.NestedString(w.Object, "spec", "image")
		runs, _, _ := unstructured.NestedString(w.Object, "status", "image")
		ready, _, _ := unstructured.NestedBool(w.Object, "status", "ready")
		if ready && runs == want {
			available++
			continue
		}
		if lagging[w.GetName()] != want {
			lagging[w.GetName()] = want
			continue
		}
		require.NoError(t, unstructured.SetNestedField(w.Object, true, "status", "ready"))
		require.NoError(t, unstructured.SetNestedField(w.Object, time.Now().UTC().Format(time.RFC3339), "status", "readySince"))
		require.NoError(t, unstructured.SetNestedField(w.Object, want, "status", "image"))
		// The fake keeps no resourceVersions; the informer ignores an
		// update that does not change it.
		w.SetResourceVersion(w.GetResourceVersion() + "r")
		_, err := h.workerAPI().Update(h.ctx, &w, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	return available
}

// An image change under InPlaceIfPossible (maxSurge 0, maxUnavailable 1)
// moves the 4 Workers to the new image where they stand: no Worker is
// created or deleted, their UIDs stay, at least 3 are available at every
// look, and the status ends at the update revision. Without in-place
// support the same rollout would delete and create all 4.
func TestInPlaceRolloutKeepsWorkers(t *testing.T) {
	set := newSet("web", int64(4))
	set.Object["spec"].(map[string]any)["strategy"] = map[string]any{
		"type":          "InPlaceIfPossible",
		"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": int64(1)},
	}
	h, _ := startRolling(t, set)
	lagging := map[string]string{}
	require.Eventually(t, func() bool { return h.runImages(t, lagging) == 4 }, 20*time.Second, 10*time.Millisecond, "4 Workers up")
	uids := map[string]types.UID{}
	for _, w := range h.listWorkers(t) {
		uids[w.GetName()] = w.GetUID()
	}
	creates, deletes := len(h.calls("create")), len(h.calls("delete"))

	got, err := h.sets().Get(h.ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(got.Object, "worker:2", "spec", "template", "spec", "image"))
	_, err = h.sets().Update(h.ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)

	minAvailable := 4
	require.Eventually(t, func() bool {
		available := h.runImages(t, lagging)
		minAvailable = min(minAvailable, available)
		workers := h.listWorkers(t)
		for _, w := range workers {
			if image, _, _ := unstructured.NestedString(w.Object, "spec", "image"); image != "worker:2" {
				return false
			}
		}
		cur, err := h.sets().Get(h.ctx, "web", metav1.GetOptions{})
		require.NoError(t, err)
		st, _, _ := unstructured.NestedMap(cur.Object, "status")
		return available == 4 && len(workers) == 4 && st["updatedReplicas"] == int64(4) &&
			st["availableReplicas"] == int64(4) && st["currentRevision"] == st["updateRevision"]
	}, 20*time.Second, 10*time.Millisecond, "rolled out to worker:2 in place")

	assert.GreaterOrEqual(t, minAvailable, 3, "maxUnavailable 1")
	assert.Less(t, minAvailable, 4, "the agents' lag made some Worker unavailable: the bound was tested")
	assert.Len(t, h.calls("create"), creates, "no Worker created")
	assert.Len(t, h.calls("delete"), deletes, "no Worker deleted")
	for _, w := range h.listWorkers(t) {
		assert.Equal(t, uids[w.GetName()], w.GetUID(), "%s is one of the Workers before", w.GetName())
	}
	assert.Len(t, h.listWorkers(t), len(uids))
	for _, e := range h.events() {
		assert.NotContains(t, e, "Warning", "no Warning event")
	}
}

// TestInPlaceSizeMatchesDoc recounts inplace.go's code lines and checks
// doc.go states it.
func TestInPlaceSizeMatchesDoc(t *testing.T) {
	n := adapterLines(t, "inplace.go")
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`inplace.go, (\d+) lines without comments`).FindSubmatch(doc)
	require.NotNil(t, m, "doc.go states inplace.go's size")
	stated, _ := strconv.Atoi(string(m[1]))
	assert.Equal(t, n, stated, "doc.go says %d lines, inplace.go has %d", stated, n)
}
