package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/gang"
)

// TestGangScale runs the Gang example (indexed pods named <gang>-<i>, the
// owner through the dynamic client) on a real apiserver: 0 -> 5 -> 2 -> 4.
// At each settle point the live pods are exactly gang-0 ... gang-(n-1); a
// sampler of both watches checks that no index is ever held by two live
// pods, that no pod is ever created beyond the replicas in force, and that
// no name outside gang-0 ... gang-4 ever appears.
func TestGangScale(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	require.NoError(t, s.env.InstallCRDsFromYAML(s.ctx, gang.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	sampler := newChildSampler(t, dyn, s.ns, gang.Resource, corev1.SchemeGroupVersion.WithResource("pods"), "Gang",
		func(u *unstructured.Unstructured) int64 {
			n, err := childset.NestedReplicas(u.Object, 1, "spec", "replicas")
			if err != nil {
				t.Errorf("Gang %s: %v", u.GetName(), err)
			}
			return int64(n)
		})
	gangs := dyn.Resource(gang.Resource).Namespace(s.ns)

	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptrTemplate(map[string]string{"app": "gang"}))
	require.NoError(t, err)
	g := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"replicas": int64(0), "template": tmpl},
	}}
	g.SetGroupVersionKind(gang.Kind)
	g.SetName("gang")
	g, err = gangs.Create(s.ctx, g, metav1.CreateOptions{})
	require.NoError(t, err)

	warnings := s.runGang(dyn)
	start := time.Now()
	for _, n := range []int{5, 2, 4} {
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
		_, err := gangs.Patch(s.ctx, "gang", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		require.NoError(t, err)
		s.settleChildren(sampler, g.GetUID(), n)
		want := make([]string, n)
		for i := range n {
			want[i] = "gang-" + strconv.Itoa(i)
		}
		require.Equal(t, want, sampler.liveOf(g.GetUID()), "live pods seen by the watch after scaling to %d", n)
		var names []string
		for _, p := range activePods(s.listPods(gang.Label + "=gang")) {
			names = append(names, p.Name)
			require.Equal(t, strconv.Itoa(slices.Index(want, p.Name)), p.Labels[childset.IndexLabel], "index label of %s", p.Name)
		}
		slices.Sort(names)
		require.Equal(t, want, names, "live pods in the API after scaling to %d", n)
	}
	r := sampler.replay()
	for name := range r.names {
		require.Contains(t, []string{"gang-0", "gang-1", "gang-2", "gang-3", "gang-4"}, name, "no pod outside the indices ever asked for")
	}
	require.Empty(t, warnings.list(), "Warning events")
	t.Logf("gang: 0 -> 5 -> 2 -> 4 in %s, %d pod names seen", time.Since(start).Round(time.Millisecond), len(r.names))
}

// runGang starts the Gang controller: pods through the controller's typed
// client, Gangs through dyn.
func (s *scenario) runGang(dyn dynamic.Interface) *warningRecorder {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	pods := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	gangs := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	rec := &warningRecorder{}
	c, err := gang.NewController(ctx, s.ctrlClient, pods.Core().V1().Pods(), gangs, gang.WithEventRecorder(rec))
	if err != nil {
		cancel()
		s.t.Fatalf("construct Gang controller: %v", err)
	}
	pods.Start(ctx.Done())
	gangs.Start(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, pods.Shutdown, gangs.Shutdown)
	return rec
}
