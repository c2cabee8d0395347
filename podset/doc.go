// Package podset is the ReplicaSet controller core as a library: it keeps
// the pods of any owner kind at the owner's desired count, with the
// semantics of upstream's pkg/controller/replicaset (v1.36): the
// read-your-writes check, the expectations gate read before the pods, claim
// with an uncached re-read before adopting, slow-start creations capped per
// sync, ranked parallel deletions, the status written from the counts, and a
// requeue when the next pod becomes available under minReadySeconds.
//
// A user describes an owner type O with a Kind[O] (GVK, desired replicas,
// selector, template, minReadySeconds, cached and uncached get, status
// write; optionally SiblingLister for ranking), typed or unstructured, then:
//
//	c, err := podset.New(ctx, client, podInformer, ownerInformer, kind)
//	// start the informers
//	go func() { <-sigterm; c.Drain() }()
//	err = c.Run(ctx)
//
// Run has two stops. Cancelling ctx stops at once: syncs in flight see their
// context cancelled and queued owners are dropped, which is what losing a
// leader lease needs. Drain stops gracefully: queued owners are still synced,
// for at most WithDrainTimeout.
//
// An owner the controller could never converge on (a selector that is
// invalid, empty, or does not match the template's labels) is refused
// before any write, with a Warning event and StatusInput.SpecErr. Every
// write of a sync has a deadline, WithWriteTimeout.
//
// Another framework can drive the same core: the On* methods are the informer
// event handlers, Sync reconciles one "namespace/name" key, and
// ProcessNextWorkItem runs one item of the controller's Queue.
//
// Upstream's four feature gates (PodDeletionCost, LogarithmicScaleDown,
// DeploymentReplicaSetTerminatingReplicas,
// StaleControllerConsistencyReplicaSet) are read at every sync from the
// function given to WithFeatureGates; the defaults are upstream v1.36.3's,
// all on. The read-your-writes guard (package consistency) is on by default
// and records the owner's status writes and, with the default pod control,
// its pod creations; WithReadYourWrites(false) turns it off. An owner it
// holds is polled every second rather than retried through the failure
// backoff, and failures caused by an unreachable API server back off at
// most 30 s, so owners resume soon after an outage (requeue.go).
//
// AddPodControllerIndexer and FilterPodsByOwner are upstream's pod-by-owner
// informer index, for controllers that list an owner's pods themselves.
package podset
