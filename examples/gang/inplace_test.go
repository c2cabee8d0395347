package gang_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/gang"
)

var (
	_ childset.UpdateStrategySpec[*unstructured.Unstructured] = gang.RollingGangs{}
	_ childset.InPlaceKind[*v1.Pod]                           = gang.Pods{}
)

func TestRollingGangsUpdateStrategy(t *testing.T) {
	g := newGang("g", int64(1))
	assert.Equal(t, childset.UpdateStrategy(""), gang.RollingGangs{}.UpdateStrategy(g), "absent: the core's Recreate")
	g.Object["spec"].(map[string]any)["strategy"] = map[string]any{"type": "InPlaceIfPossible"}
	assert.Equal(t, childset.InPlaceIfPossible, gang.RollingGangs{}.UpdateStrategy(g))
	// The CRD lets only the three through; the parsing is the core's.
	_, err := gang.RollingGangs{}.NewChild(g)
	require.NoError(t, err)
}

// runContainers stands in for the kubelet, one step behind: a pod whose
// container does not yet report its spec's image is left for this call
// if it is new to lagging, and reported Ready, running that image, on
// the next. It returns how many pods are available (Ready and running
// their image).
func (h *harness) runContainers(t *testing.T, lagging map[string]string) int {
	t.Helper()
	list, err := h.client.CoreV1().Pods(ns).List(h.ctx, metav1.ListOptions{})
	require.NoError(t, err)
	available := 0
	for _, p := range list.Items {
		want := p.Spec.Containers[0].Image
		st := p.Status.ContainerStatuses
		if len(st) == 1 && st[0].Image == want && st[0].Ready && len(p.Status.Conditions) > 0 {
			available++
			continue
		}
		if lagging[p.Name] != want {
			lagging[p.Name] = want
			continue
		}
		// A patch of the status alone: an update of the whole pod as
		// listed would put back a spec the controller has patched since.
		// The fake keeps no resourceVersions, and the informer ignores an
		// event that does not change it, so the patch sets one.
		now := metav1.Now()
		status, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": p.ResourceVersion + "r"},
			"status": v1.PodStatus{Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now}},
				ContainerStatuses: []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: want, Ready: true,
					State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}}}},
		})
		require.NoError(t, err)
		_, err = h.client.CoreV1().Pods(ns).Patch(h.ctx, p.Name, types.MergePatchType, status, metav1.PatchOptions{}, "status")
		require.NoError(t, err)
	}
	return available
}

// An image change under InPlaceIfPossible (maxUnavailable 1) moves the 4
// indexed pods to the new image where they stand: no pod is created or
// deleted, at least 3 are available at every look (a pod patched counts
// as unavailable until its container runs the new image), and the status
// ends at the update revision. Without in-place support the same rollout
// deletes and recreates every index.
func TestInPlaceRolloutKeepsPods(t *testing.T) {
	g := newGang("g", int64(4))
	g.Object["spec"].(map[string]any)["strategy"] = map[string]any{
		"type":          "InPlaceIfPossible",
		"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": int64(1)},
	}
	h := startRolling(t, g)
	api := h.dyn.Resource(gang.Resource).Namespace(ns)
	lagging := map[string]string{}
	require.Eventually(t, func() bool { return h.runContainers(t, lagging) == 4 }, 20*time.Second, 10*time.Millisecond, "4 pods up")
	// And the controller has seen them so: a pod its cache still shows
	// unavailable costs nothing to update, as an unavailable pod costs
	// nothing to replace, and would be updated at once.
	require.Eventually(t, func() bool {
		cur, err := api.Get(h.ctx, "g", metav1.GetOptions{})
		require.NoError(t, err)
		n, _, _ := unstructured.NestedInt64(cur.Object, "status", "availableReplicas")
		return n == 4
	}, 20*time.Second, 10*time.Millisecond, "the controller sees 4 available")
	creates, deletes := len(h.calls("create")), len(h.calls("delete"))

	got, err := api.Get(h.ctx, "g", metav1.GetOptions{})
	require.NoError(t, err)
	containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "trainer:2"
	require.NoError(t, unstructured.SetNestedSlice(got.Object, containers, "spec", "template", "spec", "containers"))
	_, err = api.Update(h.ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)

	minAvailable := 4
	require.Eventually(t, func() bool {
		available := h.runContainers(t, lagging)
		minAvailable = min(minAvailable, available)
		list, err := h.client.CoreV1().Pods(ns).List(h.ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, p := range list.Items {
			if p.Spec.Containers[0].Image != "trainer:2" {
				return false
			}
		}
		cur, err := api.Get(h.ctx, "g", metav1.GetOptions{})
		require.NoError(t, err)
		st, _, _ := unstructured.NestedMap(cur.Object, "status")
		return available == 4 && len(list.Items) == 4 && st["updatedReplicas"] == int64(4) &&
			st["availableReplicas"] == int64(4) && st["currentRevision"] == st["updateRevision"]
	}, 20*time.Second, 10*time.Millisecond, "rolled out to trainer:2 in place")

	assert.GreaterOrEqual(t, minAvailable, 3, "maxUnavailable 1")
	assert.Less(t, minAvailable, 4, "the kubelet's lag made some pod unavailable: the bound was tested")
	assert.Len(t, h.calls("create"), creates, "no pod created")
	assert.Len(t, h.calls("delete"), deletes, "no pod deleted")
	assert.Equal(t, []string{"g-0", "g-1", "g-2", "g-3"}, h.podNames(t))
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
	m := regexp.MustCompile(`inplace\.go, (\d+) lines without comments`).FindSubmatch(doc)
	require.NotNil(t, m, "doc.go states inplace.go's size")
	stated, _ := strconv.Atoi(string(m[1]))
	assert.Equal(t, n, stated, "doc.go says %d lines, inplace.go has %d", stated, n)
}
