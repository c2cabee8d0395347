package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/process"
	"github.com/ctrlkit/ctrlkit/shard"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// gaugeValue reads one unlabelled gauge or counter back from the registry.
func gaugeValue(t *testing.T, m *metrics, name string) float64 {
	t.Helper()
	v, ok := registeredValue(t, m, name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	return v
}

// registeredValue is gaugeValue for a metric that may not be registered
// yet: serve registers a ring's metrics on its own goroutine.
func registeredValue(t *testing.T, m *metrics, name string) (float64, bool) {
	t.Helper()
	families, err := m.registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		s := f.GetMetric()[0]
		if s.GetCounter() != nil {
			return s.GetCounter().GetValue(), true
		}
		return s.GetGauge().GetValue(), true
	}
	return 0, false
}

// Two ring members on one simulated cluster: the first holds everything and
// brings the owners up; the second joins, the shares split, each member
// restarts its informers over its new share, and a scale-up afterwards is
// carried out without any owner ever having more pods than it asks for.
func TestRingMembersShareTheOwners(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cluster := simcluster.New(simcluster.WithStartupDelay(0))
	cs := cluster.Client()
	ctx := context.Background()

	start := func(id string) (*metrics, func()) {
		m, err := newMetrics()
		require.NoError(t, err)
		o := options{kind: replicaset.ReplicaSets, workers: 2, burst: 500, drainTimeout: time.Second, metrics: m,
			shard: shard.Flags{Ring: "test", By: shard.ByUID, Namespace: "kube-system", Identity: id,
				LeaseDuration: 3 * time.Second, RenewInterval: 100 * time.Millisecond, SafetyMargin: time.Second,
				SweepInterval: time.Second}}
		require.NoError(t, o.shard.Validate())
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- serve(rctx, nil, o, process.OneClient(cs), nil, true) }()
		return m, func() {
			cancel()
			require.NoError(t, <-done)
		}
	}

	const owners = 12
	var uids []types.UID
	for i := range owners {
		labels := map[string]string{"app": fmt.Sprint("o", i)}
		rs, err := cs.AppsV1().ReplicaSets("default").Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("o", i)},
			Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		uids = append(uids, rs.UID)
	}
	// over fails the test if any owner ever has more live pods than want.
	podsOf := func(want int) (bool, string) {
		list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		count := map[types.UID]int{}
		for _, p := range list.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && p.DeletionTimestamp == nil {
				count[ref.UID]++
			}
		}
		ok := true
		for _, uid := range uids {
			require.LessOrEqual(t, count[uid], want, "owner %s has more pods than it asks for", uid)
			ok = ok && count[uid] == want
		}
		return ok, fmt.Sprint(count)
	}
	wait := func(what string, cond func() (bool, string)) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			ok, last := cond()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: %s", what, last)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	mA, stopA := start("a")
	wait("a to bring every owner to 2 pods", func() (bool, string) { return podsOf(2) })
	require.Equal(t, 1.0, gaugeValue(t, mA, "ctrlkit_shard_held_fraction"))

	mB, stopB := start("b")
	wait("the shares to split", func() (bool, string) {
		if _, ok := registeredValue(t, mB, "ctrlkit_shard_held_fraction"); !ok {
			return false, "b has not joined yet"
		}
		a, b := gaugeValue(t, mA, "ctrlkit_shard_held_fraction"), gaugeValue(t, mB, "ctrlkit_shard_held_fraction")
		oa, ob := gaugeValue(t, mA, "ctrlkit_shard_owners"), gaugeValue(t, mB, "ctrlkit_shard_owners")
		return a > 0 && b > 0 && a+b > 0.9999 && oa+ob == owners, fmt.Sprintf("held %v+%v, owners %v+%v", a, b, oa, ob)
	})
	require.GreaterOrEqual(t, gaugeValue(t, mA, "ctrlkit_shard_restarts_total"), 2.0, "a restarts over its smaller share")

	for i := range owners {
		sc, err := cs.AppsV1().ReplicaSets("default").Get(ctx, fmt.Sprint("o", i), metav1.GetOptions{})
		require.NoError(t, err)
		sc.Spec.Replicas = new(int32(3))
		_, err = cs.AppsV1().ReplicaSets("default").Update(ctx, sc, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	wait("both members to bring every owner to 3 pods", func() (bool, string) { return podsOf(3) })
	// Counted from the controllers' events, which are written on their own.
	wait("every pod counted as created once, some by b", func() (bool, string) {
		a, b := gaugeValue(t, mA, "ctrlkit_controller_pods_created_total"), gaugeValue(t, mB, "ctrlkit_controller_pods_created_total")
		return b > 0 && a+b == owners*3, fmt.Sprintf("a %v, b %v", a, b)
	})

	stopB()
	wait("a to hold everything again", func() (bool, string) {
		a := gaugeValue(t, mA, "ctrlkit_shard_held_fraction")
		return a == 1, fmt.Sprint(a)
	})
	stopA()
	leases, err := cs.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, leases.Items, "members delete their Leases when they stop")
}
