package shard_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/shard"
)

// A Runner runs one epoch per share: the build function makes the
// informers over Epoch.ListWatch and the controller, whose syncs go through
// Epoch.Fence; the Runner starts them, and stops them when the share changes
// or the replica drains.
func ExampleRunner() {
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "uid-b"}},
	)
	m, err := shard.NewMember(client.CoordinationV1(), "kube-system", "my-controller", "replica-0",
		shard.WithRenewInterval(20*time.Millisecond)) // the defaults renew every 4s
	if err != nil {
		panic(err)
	}
	working := make(chan struct{})
	r := shard.NewRunner(m, func(_ context.Context, e *shard.Epoch) (*shard.Work, error) {
		lw, err := e.ListWatch(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return client.CoreV1().ConfigMaps("").List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return client.CoreV1().ConfigMaps("").Watch(ctx, o)
			},
		}, shard.ByKey(shard.KeyUID))
		if err != nil {
			return nil, err
		}
		owners := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		sync := func(ctx context.Context, key string) {
			if wctx, done, _, ok := e.Fence(ctx, key); ok {
				_ = wctx // write with wctx here
				done()
				fmt.Println("synced", key)
			}
		}
		return &shard.Work{
			Informers: []cache.SharedIndexInformer{owners},
			Owners:    owners, OwnerHash: shard.ByKey(shard.KeyUID).Hash,
			// A real controller runs workers over a queue here.
			Run: func(ctx context.Context) {
				if cache.WaitForCacheSync(ctx.Done(), owners.HasSynced) {
					fmt.Printf("working on %.0f%% of the hash space\n", e.Held.Fraction()*100)
					for _, key := range []string{"ns/a", "ns/b"} {
						sync(ctx, key)
					}
					close(working)
				}
				<-ctx.Done()
			},
			Queue: func(string) {},
		}, nil
	})
	drain := make(chan struct{})
	stopped := make(chan error)
	go func() { stopped <- r.Run(context.Background(), drain) }()
	<-working
	close(drain) // a Work without Drain stops at once
	fmt.Println("left cleanly:", <-stopped == nil)
	// Output:
	// working on 100% of the hash space
	// synced ns/a
	// synced ns/b
	// left cleanly: true
}
