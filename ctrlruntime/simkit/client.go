package simkit

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cachedReads is a client whose reads come from the cache and whose
// writes go to the cluster, as the client of a controller-runtime manager.
// Unlike a manager's default it reads unstructured objects from the cache
// too, so every read can lag behind a held watch.
type cachedReads struct {
	client.WithWatch
	cache client.Reader
}

func (c cachedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.cache.Get(ctx, key, obj, opts...)
}

func (c cachedReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.cache.List(ctx, list, opts...)
}
