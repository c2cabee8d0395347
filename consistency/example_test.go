package consistency_test

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlkit/ctrlkit/consistency"
)

// appliedVersion stands in for an informer's store, which from client-go
// v0.36 on reports the resource version it has applied; the reflector
// advances it as the watch delivers events.
type appliedVersion struct{ rv string }

func (s *appliedVersion) LastStoreSyncResourceVersion() string { return s.rv }

func Example() {
	podsGR := schema.GroupResource{Resource: "pods"}
	// In a controller this is the pod informer's GetStore(), registered when
	// it is a consistency.SyncedResourceVersioner:
	//
	//	if s, ok := podInformer.GetStore().(consistency.SyncedResourceVersioner); ok { ... }
	podStore := &appliedVersion{rv: "100"}
	guard := consistency.NewGuard(consistency.WithStore(podsGR, podStore))

	const owner = "default/web"
	// The sync created a pod; the API server answered with version 105.
	guard.WroteAt(owner, podsGR, "105")

	// The next sync comes before the informer has seen that pod.
	err := guard.EnsureReady(owner)
	fmt.Println("stale:", errors.Is(err, consistency.ErrStaleCache))

	// The watch delivers it, and the owner may be synced again.
	podStore.rv = "105"
	fmt.Println("ready:", guard.EnsureReady(owner) == nil)
	// Output:
	// stale: true
	// ready: true
}
