package parity

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/featuregate"

	ckrs "github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podset"
)

// Upstream's own gate lookup, handed to WithFeatureGates as a caller of
// this release would hand it, serves a whole scale-down. The registry
// panics on a gate it does not know, and v1.37 no longer knows
// LogarithmicScaleDown (always on), so ctrlkit must never ask about it.
func TestUpstreamGateLookupServesWithFeatureGates(t *testing.T) {
	require.Panics(t, func() { utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature("LogarithmicScaleDown")) },
		"the premise: this release's registry panics on a gate it no longer registers")

	ctx, cancel := context.WithTimeout(benchCtx(t), 30*time.Second)
	defer cancel()
	rss, pods := syncFixture(syncShape{owners: 1, pods: 20}, true)
	objs := []runtime.Object{rss[0]}
	for _, p := range pods {
		objs = append(objs, p)
	}
	client := fake.NewClientset(objs...)
	deleted := make(chan string, len(pods))
	client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		deleted <- a.(clienttesting.DeleteAction).GetName()
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	podInf, rsInf := factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets()
	c, err := ckrs.NewReplicaSetController(ctx, client, podInf, rsInf, podset.WithFeatureGates(func(f string) bool {
		return utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(f))
	}))
	require.NoError(t, err)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	surplus := len(pods) - int(*rss[0].Spec.Replicas)
	for range surplus {
		select {
		case <-deleted:
		case <-ctx.Done():
			t.Fatalf("the scale-down did not finish: %v", ctx.Err())
		}
	}
	cancel()
	require.NoError(t, <-done)
	factory.Shutdown()
}
