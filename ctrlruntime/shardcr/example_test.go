package shardcr_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/shardcr"
	"github.com/ctrlkit/ctrlkit/shard"
)

// A replica joins its ring (in a manager: mgr.Add(member)), and a
// reconciler wrapped by the sharding works only on the owners it holds,
// each under the share's fence.
func Example() {
	clientset := fake.NewClientset() // a real clientset in a controller
	member, err := shardcr.NewMember(clientset.CoordinationV1(), "kube-system", "replicasets", "replica-0",
		shard.WithRenewInterval(20*time.Millisecond)) // the defaults renew every 4s
	if err != nil {
		panic(err)
	}
	changed, unsubscribe := member.Subscribe()
	defer unsubscribe()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- member.Start(ctx) }()
	<-changed // alone in the ring, it soon holds everything

	sharding := shardcr.New(member, shard.KeyUID)
	web := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "6b1f0c7e"}}
	fmt.Println("holds web:", sharding.HoldsOwner(web))

	cache := crfake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(web).Build() // the manager's cache
	inner := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		fmt.Printf("reconciling %s, fenced: %v\n", req.NamespacedName, ctx.Err() == nil)
		return reconcile.Result{}, nil
	})
	r := shardcr.NewReconciler(inner, sharding, cache, func() client.Object { return &appsv1.ReplicaSet{} }, nil, nil)
	_, _ = r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}})

	cancel()
	fmt.Println("left the ring:", <-stopped == nil)
	// Output:
	// holds web: true
	// reconciling ns/web, fenced: true
	// left the ring: true
}
