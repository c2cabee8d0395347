// Package podsetcr runs ctrlkit's podset, the ReplicaSet controller core, for
// a custom resource inside a controller-runtime manager.
//
// A "keep N pods for my CRD" controller is a Describer (where the desired
// count, selector, template and minReadySeconds live in the owner, and how
// podset's counts go into its status) and three lines:
//
//	c, err := podsetcr.NewControllerManagedBy[*v1alpha1.PodGroup](mgr, describer).
//		WithOptions(podset.WithWorkers(10)).
//		Complete()
//
// Kind turns the Describer into a podset.Kind over the manager: owners are
// read from its cache (Get) and its API reader (GetUncached, the adoption
// re-check), and the status is written to the status subresource through its
// client, only when it changed and with one retry on a conflict.
//
// Complete adds a Controller to the manager, a Runnable that needs leader
// election. When the manager starts it (once the lease is held), it takes
// the pod and owner informers from the manager's cache, so no second set of
// informers is started, registers podset's handlers and pod-by-owner index
// on them and runs podset with all of its semantics: expectations observed
// from pod events, the read-your-writes guard, slow-start creation and
// ranked deletion. Pods are created, adopted and deleted through the
// manager's client (crclient.PodControl), which reports each write to the
// guard. Losing the lease cancels the controller at once. The work queue's
// metrics are controller-runtime's standard workqueue series on the
// manager's /metrics, labelled with the controller's name
// (ctrlruntime.MetricsProvider), and events go to the manager's recorder.
//
// podset needs client-go SharedIndexInformers, which is what the manager's
// default cache holds. A cache restricted to namespaces
// (cache.Options.DefaultNamespaces) wraps one informer per namespace, and
// Start refuses it with an error; restrict the cache with label or field
// selectors instead. A podset option given an impossible value panics where
// it is built (podset's convention); what podset.New still refuses is
// reported by Start, which stops the manager.
package podsetcr
