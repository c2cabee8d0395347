// Package podsetcr runs ctrlkit's podset, the ReplicaSet controller core, for
// a custom resource inside a controller-runtime manager.
//
// A "keep N pods for my CRD" controller is a Describer (where the desired
// count, selector, template and minReadySeconds live in the owner, and how
// podset's counts go into its status) and three lines:
//
//	c, err := podsetcr.SetupWithManager[*v1alpha1.PodGroup](mgr, describer,
//		podsetcr.WithPodSetOptions(podset.WithWorkers(10)))
//
// Kind turns the Describer into a podset.Kind over the manager: owners are
// read from its cache (Get) and its API reader (GetUncached, the adoption
// re-check), and the status is written to the status subresource through its
// client, only when it changed and with one retry on a conflict.
//
// SetupWithManager builds podset's core alone (podset.NewReconciler: no queue, no
// workers, no handlers of podset's own) and registers it with
// controller-runtime's builder as a plain reconcile.Reconciler (Controller), watching owners and pods through
// the set core's handlers (childsetcr.NewChildHandler, NewOwnerHandler),
// which feed podset's expectations from the events (the core's Observe
// methods) and queue the owners. The manager then
// runs it as any controller: under its leader election, on its queue (the
// priority queue when enabled), with its warm-up, reconcile timeouts and
// standard workqueue metrics. The pod and owner informers are the manager
// cache's own, so no second informer is started. Pods are created, adopted
// and deleted through the manager's client (crclient.Writer), the one
// writer podset wraps with its events and read-your-writes recording; an
// owner the guard holds is polled, not failed. Events go to the manager's
// recorder. SetupWithManager resolves the pod and owner kinds through the
// manager's RESTMapper, which for the default mapper asks the API
// server's discovery.
//
// WithSharding runs the controller on every replica, each working on its
// share of the owners of a shard ring (package shardcr).
//
// The manager's default cache holds client-go SharedIndexInformers, which
// podset reads directly, with a read-your-writes guard over their stores. A
// cache restricted to namespaces (cache.Options.DefaultNamespaces) keeps
// one informer per namespace: podset then reads pods and owners through
// the cache (podset.NewCore), with the pods indexed by controller
// (childsetcr's field index), and has no guard unless one is given
// (podset.WithReadYourWrites). A podset option given an impossible value panics where
// it is built (podset's convention), and so does SetupWithManager when given an
// option of podset's own driver, which controller-runtime's replaces
// (WithQueueName, WithEventSource, WithMetricsProvider, WithDrainTimeout,
// WithUnreachableBackoffCap); what the cache refuses is reported by
// SetupWithManager.
package podsetcr
