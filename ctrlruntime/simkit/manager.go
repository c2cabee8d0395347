package simkit

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// NewManager returns a controller-runtime manager over the kit: its scheme,
// RESTMapper, cache (GetCache) and client (GetClient) are the kit's, so
// controllers built with its builder read a cache HoldWatches can hold and
// write to the simulated cluster. opts configures the rest, with these
// changes: the metrics server is off unless opts.Metrics.BindAddress asks
// for one, and leader election is off (there is no Lease store to elect
// through). The manager starts the kit's cache: do not also call Start or
// StartTest.
//
// What the manager reaches outside the kit talks to no server:
// GetAPIReader fails (use the kit's APIReader), and events from
// GetEventRecorderFor are dropped after failing to be sent (give your
// reconciler a record.FakeRecorder to assert on events).
func (k *Kit) NewManager(opts manager.Options) (manager.Manager, error) {
	opts.Scheme = k.scheme
	opts.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return k.mapper, nil }
	opts.NewCache = func(*rest.Config, cache.Options) (cache.Cache, error) { return k.cache, nil }
	opts.NewClient = func(*rest.Config, client.Options) (client.Client, error) { return k.client, nil }
	if opts.Metrics.BindAddress == "" {
		opts.Metrics.BindAddress = "0"
	}
	opts.LeaderElection = false
	return manager.New(nowhere, opts)
}
