package e2e

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/gang"
)

// TestGangRollingUpdate runs ctrlruntime/examples/gang with
// spec.strategy.rollingUpdate {maxUnavailable: 1} over 5 indexed pods, the
// test acting as the kubelet (it marks each new pod Ready). A changed image
// replaces the pods in place of their index; the watch replayed in
// resourceVersion order shows at every event from the change on at most 5
// pods and at least 4 ready ones, no index held by two live pods, and the
// rollout ends with every pod at the update revision.
func TestGangRollingUpdate(t *testing.T) {
	const replicas = 5
	ctx, cfg, dyn, ns := childsetScenario(t, "gang-roll-", gang.CRD)
	gangs := dyn.Resource(gangsResource).Namespace(ns)
	pods := dyn.Resource(podsResource).Namespace(ns)

	indices := &setSampler{ownerKind: "Gang"}
	startSampler(t, dyn, ns, indices, gangsResource, podsResource)
	bounds := &rolloutSampler{maxTotal: replicas, minReady: replicas - 1, ready: podReady}
	startRolloutSampler(t, dyn, ns, podsResource, bounds)
	startKubelet(t, ctx, pods)
	stop := startChildsetManager(t, cfg, "0", func(mgr ctrl.Manager) error {
		_, err := gang.SetupWithManager(mgr, childsetQueue)
		return err
	})
	defer stop()

	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"gang": "train"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "rank", Image: "registry.k8s.io/pause:3.10"}}},
	})
	require.NoError(t, err)
	g, err := gangs.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gang.GroupVersion.String(), "kind": "Gang",
		"metadata": map[string]any{"name": "train"},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": map[string]any{"gang": "train"}},
			"template": tmpl,
			"strategy": map[string]any{"rollingUpdate": map[string]any{"maxUnavailable": int64(1)}},
		},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	first := waitOwnerRolledOut(t, ctx, gangs, pods, "train", g.GetUID(), replicas, "registry.k8s.io/pause:3.10", podImage)

	var rv int64
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := gangs.Get(ctx, "train", metav1.GetOptions{})
		if err != nil {
			return err
		}
		containers, _, _ := unstructured.NestedSlice(cur.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = "registry.k8s.io/pause:3.9"
		if err := unstructured.SetNestedSlice(cur.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			return err
		}
		updated, err := gangs.Update(ctx, cur, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		rv, err = strconv.ParseInt(updated.GetResourceVersion(), 10, 64)
		return err
	}))
	start := time.Now()
	update := waitOwnerRolledOut(t, ctx, gangs, pods, "train", g.GetUID(), replicas, "registry.k8s.io/pause:3.9", podImage)
	require.NotEqual(t, first, update)
	require.NoError(t, waitFor(time.Minute, func() (bool, error) {
		return prefixSettled(ctx, pods, g.GetUID(), "train", replicas)
	}))

	rep := bounds.replay(rv, g.GetUID())
	t.Logf("gang rolled in %s: %d events checked, max pods %d (bound %d), min ready %d (bound %d), pods created %d",
		time.Since(start).Round(time.Millisecond), rep.Samples, rep.MaxTotal, replicas, rep.MinReady, replicas-1, rep.Created)
	require.Empty(t, rep.Violations)
	require.Equal(t, replicas, rep.Created, "each index replaced once")
	idx := indices.replay()
	require.Empty(t, idx.Violations, "an index held twice, or more pods than replicas, at sampled instants")
}

func podImage(u *unstructured.Unstructured) string {
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
	if len(containers) == 0 {
		return ""
	}
	img, _ := containers[0].(map[string]any)["image"].(string)
	return img
}

func podReady(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// startKubelet marks every pod Ready soon after it appears, as a kubelet
// would, until the test ends.
func startKubelet(t *testing.T, ctx context.Context, pods dynamic.ResourceInterface) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			list, err := pods.List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					p := &list.Items[i]
					if podReady(p) || p.GetDeletionTimestamp() != nil {
						continue
					}
					_ = unstructured.SetNestedSlice(p.Object, []any{map[string]any{"type": "Ready", "status": "True",
						"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}, "status", "conditions")
					_, _ = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}
