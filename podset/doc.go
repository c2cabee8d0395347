// Package podset is the ReplicaSet controller core as a library: it keeps
// the pods of any owner kind at the owner's desired count, with the
// semantics of upstream's pkg/controller/replicaset (v1.37). It is the set
// core, childset, specialised to pods (pods.go): what is about pods alone
// (the pod template, upstream's status counts, its ranking of the pods a
// scale-down deletes, and its gates) is here, and the sync itself is
// childset's, which runs the
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
// The core is childset's, specialised to pods: podset adds only what is
// about pods (pods.go, victims.go, the Kind, the gates, the transform).
// Reconciler.Reconcile(ctx, "namespace/name") decides and writes one sync
// and returns a childset.Result saying when to look again (expectations
// expiring, a pod becoming available); it reaches no queue. The Observe
// methods turn informer events into expectations and the owner keys to
// sync. NewReconciler builds the core alone, for a host with its own queue
// and handlers (ctrlruntime/podsetcr under controller-runtime); New builds
// it with the set core's one client-go driver (childset.Controller), and
// Run runs it.
//
// Every pod write goes through one writer (WithPodWriter; client-go's by
// default), which the controller wraps with upstream's events and checks,
// the write deadline and the read-your-writes recording.
//
// Upstream's feature gates (PodDeletionCost,
// DeploymentReplicaSetTerminatingReplicas,
// StaleControllerConsistencyReplicaSet) are read at every sync from the
// function given to WithFeatureGates; the defaults are upstream v1.37.2's,
// all on. Logarithmic scale-down is always on, as upstream v1.37 made it
// when it removed the LogarithmicScaleDown gate, which is never asked about. The read-your-writes guard (package consistency) is on by default
// and records the owner's status writes and the pod creations and
// adoptions its writer returns; WithReadYourWrites(nil) turns it off. An owner it
// holds is polled every second rather than retried through the failure
// backoff, and failures caused by an unreachable API server back off at
// most 30 s, so owners resume soon after an outage (internal/syncloop).
//
// A Kind that implements ScaleInKind names the pods a scale-down deletes
// first (OpenKruise's podsToDelete): the named active pods go before the
// others, ranked among themselves, and the rest are chosen by upstream's
// ranking as before; the ScaleDownDecision reports them with
// podranking.RuleNamed. A Kind without it syncs exactly as upstream.
package podset
