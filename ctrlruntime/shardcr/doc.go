// Package shardcr runs a set controller sharded inside a controller-runtime
// manager: every replica runs the controller, and each works only on the
// owners whose hash falls in its share of a shard ring (package shard).
//
// Three pieces, used together:
//
//   - Member runs a shard.Member (one Lease per replica) as a manager
//     Runnable on every replica, leader election or not, and leaves the
//     ring when the manager stops.
//
//   - Sharding says which owners and children are this replica's. Its
//     predicates drop the events of owners held elsewhere, Reconciler fences
//     each reconcile with the share's Guard and skips owners held elsewhere,
//     and Resync enqueues the owners a replica holds whenever its share
//     changes. childsetcr.WithSharding wires them into a childset controller.
//
//   - CacheFilter, given to cache.Options.NewInformer, keeps only the share
//     in the manager's cache (server-side with KEP-5866's shardSelector when
//     the API server filters, on the client when it does not), so memory
//     divides too.
//
//     member, _ := shardcr.NewMember(clientset.CoordinationV1(), "kube-system", "workersets", podName)
//     sharding := shardcr.New(member, shard.KeyUID)
//     mgr, _ := ctrl.NewManager(cfg, ctrl.Options{Cache: cache.Options{
//     NewInformer: shardcr.NewCacheFilter(sharding, scheme, nil).Owners(&v1.WorkerSet{}).Children(&v1.Worker{}).NewInformer}})
//     _ = mgr.Add(member)
//     _, _ = childsetcr.SetupWithManager[*v1.WorkerSet, *v1.Worker](mgr, spec, kind, childsetcr.WithSharding(sharding))
//
// # Fencing
//
// Two replicas never write for one owner at once. A reconcile runs under
// Guard(hash of the owner): shard grants it only while the replica's
// ranges contain the hash and its Lease is trusted, and the reconcile's
// context, which every write of the core carries, is cancelled the moment
// the replica gives the hash up or stops trusting its Lease. The replica
// keeps claiming the hash in its Lease until the guarded reconcile
// returned (or its drain timeout, or its Lease expired), and another
// replica takes a hash up only once no fresh Lease claims it. So the next
// holder's first reconcile of the owner starts after the last write of the
// previous holder returned, or after that holder's Lease went stale, which
// it stops trusting a safety margin earlier (shard's clock-skew bound).
// With KeyUID, the owner read to hash it and the owner the core works on
// must be one: the reconcile pins the UID (Pins) and the core's owner reads
// refuse another incarnation of that name (ErrOwnerReplaced, retried).
//
// With a CacheFilter, the hashes a replica takes up arrive in its cache by
// a relist of each narrowed informer, one after another: the reconcile of
// an owner waits until all of them have taken in a list holding its hash
// (CacheFilter.Covers), or the owner could be synced before its children
// arrived and look childless.
//
// What fencing does not give: the new holder's cache may not show the
// previous holder's last creations yet, and it has none of its
// expectations, so right after a hand-over it can create a surplus child
// that the next sync deletes; this is the window every leader-election
// failover of kube-controller-manager has. A write the API server already
// accepted when the guard's context was cancelled still lands; the claim
// kept until the reconcile returned covers it.
package shardcr
