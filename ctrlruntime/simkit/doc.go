// Package simkit runs controller-runtime code over simcluster, ctrlkit's
// simulated cluster, so a unit test can make the informer cache lag behind
// the controller's own writes and count what the controller does about it.
//
// New(scheme) builds the cluster (storing every kind of scheme: client-go's
// and your custom resources as typed structs) and, over it:
//
//   - Cache: a controller-runtime cache.Cache whose informers list and
//     watch the cluster directly (cache.Options.NewInformer), so they see
//     exactly what the cluster's watches deliver;
//   - Client: reads from the cache and writes to the cluster, as a
//     manager's GetClient does. It is controller-runtime's fake client over
//     the cluster's store, so writes get generated names, UIDs and
//     resourceVersions, stale updates conflict and two controller
//     references are refused, as on an apiserver;
//   - APIReader: reads from the cluster itself.
//
// HoldWatches(&Worker{}) holds back the watch events of a kind until its
// release: the client's creates succeed, the APIReader sees them, the
// cache does not. A test of "does my controller over-create when the cache
// lags" is then a few lines:
//
//	kit, _ := simkit.New(scheme)
//	ctx := kit.StartTest(t)
//	// create the owner, wait until kit.Client() reads it from the cache
//	release := kit.HoldWatches(&Worker{})
//	for range 3 { _, _ = reconciler.Reconcile(ctx, req) }
//	_ = kit.APIReader().List(ctx, &workers) // how many exist now?
//	release()
//
// Call Reconcile yourself, as above, for a test that decides when each pass
// runs (register handlers on Cache().GetInformer before StartTest), or run
// controllers built with controller-runtime's builder in NewManager, a
// manager whose cache, client and API reader are the kit's, and whose
// GetEventRecorderFor stores events in the cluster; StartManagerTest(t, mgr)
// runs it for the test, and with WithLogger(TestLogger(t)) its reconcile
// errors show in the test's log.
// kit.Cluster().Run(ctx) runs
// the simulated scheduler and kubelet when pods should become ready.
//
// Two kits over one cluster (WithCluster) are two replicas of a controller,
// each with its own cache; WithNewInformer builds the cache's informers
// over the kit's list-watch, for code that wraps cache.Options.NewInformer.
//
// What the kit does not do: the cache
// applies no label, field or namespace restriction (cache.Options.ByObject
// and DefaultNamespaces are not offered; every object of a kind is cached),
// the client has no server-side apply, and there is no admission,
// defaulting or garbage collection (see simcluster).
package simkit
