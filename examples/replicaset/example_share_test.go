package replicaset_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/shard"
)

// A replica of a sharded ReplicaSet controller: a shard.Runner builds the
// controller over each share its member holds with NewForShare. Alone in
// its ring, this member holds the whole hash space.
func ExampleNewForShare() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, stopCluster := startSimulatedCluster(ctx)
	defer func() { cancel(); stopCluster() }()

	m, err := shard.NewMember(client.CoordinationV1(), "kube-system", "replicaset", "replica-0",
		shard.WithRenewInterval(100*time.Millisecond)) // the default renews every 4 s
	if err != nil {
		panic(err)
	}
	r := shard.NewRunner(m, func(ctx context.Context, e *shard.Epoch) (*shard.Work, error) {
		w, err := replicaset.NewForShare(ctx, replicaset.ReplicaSets, e, client, client, "",
			shard.ByKey(shard.KeyUID), shard.ByController())
		if err != nil {
			return nil, err
		}
		w.SweepInterval = 30 * time.Second
		return w, nil
	})
	drain := make(chan struct{})
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(ctx, drain) }()

	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Template: webTemplate(),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	if _, err := client.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("running pods:", waitForPods(ctx, client, 3))
	close(drain) // drains the controller, then leaves the ring
	fmt.Println("Run returned:", <-stopped)
	// Output:
	// running pods: 3
	// Run returned: <nil>
}
