package consistency_test

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/consistency"
)

func Example() {
	podsGR := schema.GroupResource{Resource: "pods"}
	// In a controller this is the pod informer's GetStore().
	podStore := cache.NewStore(cache.MetaNamespaceKeyFunc)
	podStore.Bookmark("100")
	guard := consistency.NewGuard(consistency.WithStore(podsGR, podStore))

	const owner = "default/web"
	// The sync created a pod; the API server answered with version 105.
	guard.WroteAt(owner, podsGR, "105")

	// The next sync comes before the informer has seen that pod.
	err := guard.EnsureReady(owner)
	fmt.Println("stale:", errors.Is(err, consistency.ErrStaleCache))

	// The watch delivers it, and the owner may be synced again.
	podStore.Bookmark("105")
	fmt.Println("ready:", guard.EnsureReady(owner) == nil)
	// Output:
	// stale: true
	// ready: true
}
