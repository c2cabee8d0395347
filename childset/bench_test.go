package childset_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/internal/benchpair"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

const benchChildren = 10000

// benchCore is an owner with benchChildren ConfigMap children in an
// indexer, all ready, and a core writing to a Fake: a sync makes no API
// call, so the benchmarks measure the core's own work.
func benchCore(b *testing.B, replicas int32) (*childset.Reconciler[*appsv1.ReplicaSet, *v1.ConfigMap], *objectcontrol.Fake[*v1.ConfigMap], cache.Indexer, *appsv1.ReplicaSet) {
	b.Helper()
	owners := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	children := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{childset.ControllerIndex: claim.IndexByController})
	rs := newOwner("big", replicas)
	if err := owners.Add(rs); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range benchChildren {
		cm := newChild(fmt.Sprintf("big-%05d", i), rs, map[string]string{"app": "big"})
		cm.UID = types.UID(fmt.Sprintf("uid-%05d", (i*7919)%benchChildren))
		// Creation times in bursts of 100 children per second, as a
		// scale-up writes them; a tenth carry a deletion cost.
		cm.CreationTimestamp = metav1.NewTime(start.Add(time.Duration(i/100) * time.Second))
		cm.Annotations = map[string]string{"ready": "true"}
		if i%10 == 0 {
			cm.Annotations[childset.DeletionCostAnnotation] = strconv.Itoa(i % 7)
		}
		if err := children.Add(cm); err != nil {
			b.Fatal(err)
		}
	}
	fake := &objectcontrol.Fake[*v1.ConfigMap]{}
	r := childset.NewReconciler(rsSpec{owners}, cmKind{childset.IndexerLister[*v1.ConfigMap](children)}, fake)
	return r, fake, children, rs
}

// BenchmarkReconcile10k compares, at 10,000 ConfigMap children, the core's
// steady reconcile, its scale-down by one burst (500 children), and a naive
// list-and-diff loop that reads the same index and copies nothing: what any
// controller pays to learn that nothing is to be done. benchstat's
// -col /op puts the three side by side. The three run in one order in odd
// rounds (benchpair's) and in the reverse order in even ones, so that over
// an even number of rounds none always meets the machine first; cpu-ns/op
// beside ns/op measures each one's work when other processes share the
// cores.
func BenchmarkReconcile10k(b *testing.B) {
	ctx := context.Background()
	type op struct {
		name string
		run  func(b *testing.B)
	}
	ops := []op{{"naive", func(b *testing.B) {
		_, _, children, rs := benchCore(b, benchChildren)
		ref := metav1.NewControllerRef(rs, rsGVK)
		loopWithCPU(b, func() {
			objs, err := children.ByIndex(childset.ControllerIndex, claim.ControllerIndexKey(rs.Namespace, ref))
			if err != nil {
				b.Fatal(err)
			}
			active, ready := 0, 0
			for _, obj := range objs {
				cm := obj.(*v1.ConfigMap)
				if cm.DeletionTimestamp == nil {
					active++
					if cm.Annotations["ready"] == "true" {
						ready++
					}
				}
			}
			if active != int(*rs.Spec.Replicas) || ready != active {
				b.Fatalf("naive loop saw %d active, %d ready", active, ready)
			}
		}, nil)
	}}, {"steady", func(b *testing.B) {
		r, fake, _, rs := benchCore(b, benchChildren)
		sync := func() {
			if _, err := r.Reconcile(ctx, ns+"/"+rs.Name); err != nil {
				b.Fatal(err)
			}
		}
		warmUp(sync, nil)
		loopWithCPU(b, sync, nil)
		if c, d, p := fake.Counts(); c+d+p != 0 {
			b.Fatalf("steady state wrote: %d creates, %d deletes, %d patches", c, d, p)
		}
	}}, {"scaledown", func(b *testing.B) {
		r, fake, _, rs := benchCore(b, benchChildren-childset.DefaultBurstReplicas)
		key := expectations.OwnerKeyFor(rs)
		sync := func() {
			if _, err := r.Reconcile(ctx, ns+"/"+rs.Name); err != nil {
				b.Fatal(err)
			}
		}
		reset := func() {
			if _, d, _ := fake.Counts(); d != childset.DefaultBurstReplicas {
				b.Fatalf("scale-down deleted %d children, want %d", d, childset.DefaultBurstReplicas)
			}
			fake.Clear()
			r.Expectations().DeleteExpectations(key)
		}
		warmUp(sync, reset)
		loopWithCPU(b, sync, reset)
	}}}
	reversed := slices.Clone(ops)
	slices.Reverse(reversed)
	for _, o := range benchpair.Order(b, ops, reversed)[0] {
		b.Run("op="+o.name, o.run)
	}
}

// warmUp syncs an op's owner as a running controller has before it: the
// claim has judged every child (the first sync, some 10 ms at 10,000
// children) and kept the unchanged listing (the second), for the steady
// sync and the scale-down alike. Left in the loop, those syncs would weigh
// on whichever op runs fewer iterations, the scale-down.
func warmUp(sync, reset func()) {
	for range 2 {
		sync()
		if reset != nil {
			reset()
		}
	}
}

// loopWithCPU runs body under b.Loop and reports cpu-ns/op; reset, when
// not nil, runs after each body with the timer and the CPU count stopped.
func loopWithCPU(b *testing.B, body, reset func()) {
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		start := benchpair.CPUTime()
		body()
		cpu += benchpair.CPUTime() - start
		if reset != nil {
			b.StopTimer()
			reset()
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
