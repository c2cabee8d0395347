package podset

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// benchEnv is one namespace holding owners with the given pod counts, every
// owner in its steady state: all pods owned, running and ready, status up to
// date, so a sync makes no API call and measures the controller's own work.
// It returns the first owner.
func benchEnv(b *testing.B, sizes []int) (*env, *appsv1.ReplicaSet) {
	b.Helper()
	var objs []runtime.Object
	var all []*appsv1.ReplicaSet
	for i, n := range sizes {
		sel := map[string]string{"app": fmt.Sprintf("app-%d", i)}
		rs := newRS(fmt.Sprintf("rs-%d", i), int32(n), sel)
		rs.Status = appsv1.ReplicaSetStatus{Replicas: int32(n), FullyLabeledReplicas: int32(n),
			ReadyReplicas: int32(n), AvailableReplicas: int32(n), TerminatingReplicas: ptr.To[int32](0)}
		all = append(all, rs)
		objs = append(objs, rs)
	}
	e := newEnv(b, objs)
	// A production controller logs at its default verbosity; the test
	// context's verbose, ever-growing log buffer would be measured instead
	// of the sync, on both sides of the comparison.
	e.ctx = klog.NewContext(context.Background(), logr.Discard())
	for _, rs := range all {
		e.addOwner(rs)
		e.addPods(newPods(int(*rs.Spec.Replicas), rs.Name+"-", rs, v1.PodRunning, rs.Spec.Selector.MatchLabels, true)...)
	}
	return e, all[0]
}

// BenchmarkSteadyStateSync is one steady-state sync of a ReplicaSet with
// 1,000 pods in a namespace of 10,000 pods over 100 ReplicaSets, reading its
// pods from the pod-by-owner index. The side-by-side comparison with
// upstream's controller is in e2e/parity (BENCHMARKS.md).
func BenchmarkSteadyStateSync(b *testing.B) {
	// The measured owner has 1,000 pods; 99 others share 9,000.
	sizes := []int{1000}
	for i := range 99 {
		sizes = append(sizes, 90+min(1, max(0, 90-i)))
	}
	e, rs := benchEnv(b, sizes)
	if n := len(e.podStore().List()); n != 10000 {
		b.Fatalf("namespace holds %d pods, want 10000", n)
	}
	before := len(e.client.Actions())
	b.ReportAllocs()
	for b.Loop() {
		if err := e.sync(rs); err != nil {
			b.Fatal(err)
		}
	}
	if after := len(e.client.Actions()); after != before {
		b.Fatalf("steady state made %d API calls", after-before)
	}
	if c, d, p := e.pc.Counts(); c+d+p != 0 {
		b.Fatalf("steady state acted on pods: %d creates, %d deletes, %d patches", c, d, p)
	}
}
