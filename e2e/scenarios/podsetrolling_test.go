package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

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
	s.rollGangPods("web", false, s.runRollingPodSet)
}

// runRollingPodSet starts childset over the Gang's adapters in the
// interchangeable mode, with rolling updates, on the controller's clients.
func (s *scenario) runRollingPodSet() *warningRecorder {
	s.t.Helper()
	dyn, err := dynamic.NewForConfig(s.ctrlConfig)
	require.NoError(s.t, err)
	return s.runGangPodSet(s.ctrlClient, dyn)
}

// runGangPodSet starts childset over the Gang's adapters on client and dyn,
// and returns its Warnings.
func (s *scenario) runGangPodSet(client kubernetes.Interface, dyn dynamic.Interface) *warningRecorder {
	s.t.Helper()
	ctx, cancel := context.WithCancel(s.ctx)
	typed := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(s.ns))
	owners := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, s.ns, nil)
	ownerInformer := owners.ForResource(gang.Resource).Informer()
	podInformer := typed.Core().V1().Pods().Informer()
	revisions := typed.Apps().V1().ControllerRevisions()
	revisions.Informer()
	rec := &warningRecorder{}
	writer := objectcontrol.New("pod", objectcontrol.TypedWriter(func(ns string) objectcontrol.TypedClient[*corev1.Pod] {
		return client.CoreV1().Pods(ns)
	}), rec, types.StrategicMergePatchType)
	c, err := childset.New(ownerInformer, podInformer,
		gang.NewRollingGangs(gang.Gangs{Indexer: ownerInformer.GetIndexer()}, dyn),
		gang.Pods{Lister: childset.IndexerLister[*corev1.Pod](podInformer.GetIndexer())}, writer,
		childset.WithEventRecorder(rec), childset.WithRevisions(history.NewHistory(client, revisions.Lister())))
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
