package scenarios

import (
	"context"
	"fmt"
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
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// TestPodSetRollingUpdate rolls 50 interchangeable pods (generated names)
// through rollingPhases: the Gang's adapters without indexed names, so the
// set core surges new pods beside the old ones (maxSurge 25%, maxUnavailable
// 0 keeps all 50 available) instead of replacing each index in place. The
// test marks each pod Ready a moment after it appears, as a kubelet would.
func TestPodSetRollingUpdate(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	require.NoError(t, s.env.InstallCRDsFromYAML(s.ctx, gang.CRD))
	dyn, err := dynamic.NewForConfig(s.clientConfig(nil))
	require.NoError(t, err)
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	sampler := newRolloutSampler(t, dyn, s.ns, "web", "Gang", gang.Resource, pods, false, podReadiness)
	owners := dyn.Resource(gang.Resource).Namespace(s.ns)
	ready := true
	s.markReady(dyn, pods, func(u *unstructured.Unstructured) bool {
		ok, _ := podReadiness(u)
		return ok
	}, func(_ context.Context, name string) error {
		return s.setPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}, podState{ready: &ready}, time.Now())
	})

	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptrTemplate(map[string]string{"app": "web"}))
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedSlice(tmpl, []any{map[string]any{"name": "main", "image": "web:v1"}}, "spec", "containers"))
	o := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"replicas":             int64(50),
			"minReadySeconds":      int64(1),
			"revisionHistoryLimit": int64(5),
			"strategy":             map[string]any{"rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": int64(0)}},
			"template":             tmpl,
		},
	}}
	o.SetGroupVersionKind(gang.Kind)
	o.SetName("web")
	_, err = owners.Create(s.ctx, o, metav1.CreateOptions{})
	require.NoError(t, err)
	warnings := s.runRollingPodSet()

	s.runRollingPhases(sampler, owners, "web", rollingPhases(func(image string) string {
		return fmt.Sprintf(`"template":{"spec":{"containers":[{"name":"main","image":"web:%s"}]}}`, image)
	}))
	require.Empty(t, warnings.list(), "Warning events")
}

// runRollingPodSet starts childset over the Gang's adapters in the
// interchangeable mode, with rolling updates, on the controller's clients.
func (s *scenario) runRollingPodSet() *warningRecorder {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	dyn, err := dynamic.NewForConfig(s.ctrlConfig)
	require.NoError(s.t, err)
	typed := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	owners := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	ownerInformer := owners.ForResource(gang.Resource).Informer()
	podInformer := typed.Core().V1().Pods().Informer()
	revisions := typed.Apps().V1().ControllerRevisions()
	revisions.Informer()
	rec := &warningRecorder{}
	writer := objectcontrol.New("pod", objectcontrol.TypedWriter(func(ns string) objectcontrol.TypedClient[*corev1.Pod] {
		return s.ctrlClient.CoreV1().Pods(ns)
	}), rec, types.StrategicMergePatchType)
	c, err := childset.New(ownerInformer, podInformer,
		gang.NewRollingGangs(gang.Gangs{Indexer: ownerInformer.GetIndexer()}, dyn),
		gang.Pods{Lister: childset.IndexerLister[*corev1.Pod](podInformer.GetIndexer())}, writer,
		childset.WithEventRecorder(rec), childset.WithRevisions(history.NewHistory(s.ctrlClient, revisions.Lister())))
	if err != nil {
		cancel()
		s.t.Fatalf("construct the pod set controller: %v", err)
	}
	typed.Start(ctx.Done())
	owners.Start(ctx.Done())
	typed.WaitForCacheSync(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, typed.Shutdown, owners.Shutdown)
	return rec
}
