package shard_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/shard"
)

// An informer of one share: NewShareListWatch sends the share as the
// shardSelector and keeps only the share's objects, whether or not the API
// server filtered (the fake clientset, like a server with the
// ShardedListAndWatch gate off, ignores the selector).
func ExampleNewShareListWatch() {
	var objs []runtime.Object
	for i, uid := range []types.UID{
		"0b5a9e6c-8f7d-4b8e-9a51-3c2d1e0f4a6b", "5f0c2a1e-3b7d-4c9a-8e21-6d4f0a9b7c35",
		"9e2d4c6b-1a3f-4e5d-b7c8-2f1a0e9d8c76", "c4a7e1d2-6b9f-4a3c-8d5e-7f2b1c0a9e84",
	} {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("pod-", i), UID: uid}})
	}
	client := fake.NewClientset(objs...)
	pods := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, o)
		},
	}

	// The upper half of the space, as a member's Held() would give it.
	share := shard.Assign([]string{"replica-0", "replica-1"}, shard.WithSlots(2))["replica-0"]
	lw, err := shard.NewShareListWatch(pods, share, shard.ByKey(shard.KeyUID))
	if err != nil {
		panic(err)
	}
	// An informer would call this; cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, indexers).
	list, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		panic(err)
	}
	for _, p := range list.(*corev1.PodList).Items {
		fmt.Println(p.Name)
	}
	filtered, _ := lw.ServerFiltered()
	fmt.Println("filtered by the server:", filtered)
	// Output:
	// pod-0
	// pod-2
	// filtered by the server: false
}
