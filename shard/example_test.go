package shard_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/shard"
)

// Every replica computes the same shares from the same members; a share
// becomes the shardSelector of ListOptions, and Contains filters on the
// client when the API server does not.
func Example() {
	members := []string{"replica-0", "replica-1"}
	shares := shard.Assign(members, shard.WithSlots(2))

	for _, m := range members {
		sel, _ := shares[m].Selector(shard.KeyUID)
		fmt.Printf("%s: %s\n", m, sel)
	}

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "0b5a9e6c-8f7d-4b8e-9a51-3c2d1e0f4a6b"}}
	h, _ := shard.HashObject(pod, shard.KeyUID)
	fmt.Println("exactly one owner:", shares["replica-0"].Contains(h) != shares["replica-1"].Contains(h))

	// Output:
	// replica-0: shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')
	// replica-1: shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
	// exactly one owner: true
}

// A replica joins its ring, waits for its share, and fences each write batch
// with a Guard.
func ExampleMember() {
	client := fake.NewClientset() // a real clientset in a controller
	m, err := shard.NewMember(client.CoordinationV1(), "kube-system", "my-controller", "replica-0",
		shard.WithRenewInterval(20*time.Millisecond)) // the defaults renew every 4s
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- m.Run(ctx) }()

	for m.Held().Empty() { // alone in the ring, it soon holds everything
		time.Sleep(5 * time.Millisecond)
	}
	sel, _ := m.Held().Selector(shard.KeyUID)
	fmt.Println(sel)

	h := shard.Hash("uid-of-some-object")
	if wctx, done, ok := m.Guard(ctx, h); ok {
		_ = wctx // create, update or delete with wctx here
		done()
		fmt.Println("wrote under the fence")
	}

	cancel()
	fmt.Println("left cleanly:", <-stopped == nil)
	// Output:
	// shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')
	// wrote under the fence
	// left cleanly: true
}
