// Package shard spreads one controller over several replicas. Each replica
// is a Member of a ring: it keeps one coordination.k8s.io/v1 Lease, and
// every member computes the same Assignment of the 64-bit FNV-1a hash space
// from the fresh Leases, with no coordinator. A member works on the objects
// whose hash (HashObject by uid or namespace, HashController for children
// that follow their owner) falls in its Held ranges.
//
// The API server can filter for it (KEP-5866, the ShardedListAndWatch gate,
// alpha in Kubernetes 1.36): Held().Selector(KeyUID) is the shardSelector of
// ListOptions. When a list answer carries no matching ShardInfo
// (ServerFiltered), the gate is off and the informer filters on the client
// with Held().Contains. NewShareListWatch does both for an informer: it
// sends the selector, reads the ShardInfo echo, and filters every listed
// object and watch event on the client before the store, ByKey for owners
// and ByController for children that follow their owner's UID. Its share is
// fixed: when the member's share changes (WithOnChange), stop the informers
// and the work on them and start new ones over the new share, once the
// writes the stopped work left in flight have settled (the safety margin
// after the last one ended: a cancelled create may still be stored, and a
// list made before it would not count it). That relists
// the whole share, a cost paid once per hand-over; keeping informers and
// relisting only the moved ranges would need a barrier proving every cache
// has seen the gained ranges before any write on them, which a restart gives
// for free (new caches sync before the controller starts).
//
// A Runner does all of that for a controller: it runs the Member and, for
// each share, an epoch of the Work a build function makes over
// Epoch.ListWatch, listed only once the last epoch's writes have settled,
// with every sync fenced by Epoch.Fence (the member's Guard), the owners of
// gained ranges queued first, and a periodic sweep of owners whose status
// is behind. Epoch.Informer makes an informer over Epoch.ListWatch, and
// Flags gives a binary its --shard-* flags, checks them and joins the ring.
//
// Server-side selection needs k8s.io/apimachinery v0.36 (Kubernetes 1.36),
// which has ListOptions.ShardSelector and ListMeta.ShardInfo; the package
// finds those fields by name (ServerSelection), so it builds from v0.34 on
// without lifting an importer's Kubernetes libraries. Built against v0.34 or
// v0.35, or talking to a server with the gate off, a replica gets the same
// share through client-side filtering: its informer's store and memory hold
// only its share, but the server still sends it every object.
//
//	m, err := shard.NewMember(client.CoordinationV1(), "ns", "my-controller", podName,
//		shard.WithOnChange(restartInformers))
//	go m.Run(ctx)
//	...
//	h, _ := shard.HashObject(obj, shard.KeyUID)
//	wctx, done, ok := m.Guard(ctx, h)
//	if ok { write(wctx); done() }
//
// A range moves only after its holder stopped: each member publishes the
// ranges it claims in its Lease and takes up a range only after its own
// claim is written and no other fresh Lease claims it; a member gives a range
// up by stopping work first and dropping the claim afterwards, a safety
// margin after the last Guard over it ended, since a write cancelled under
// that Guard may still be stored. A member that
// could not renew its Lease within the Lease duration minus a safety margin
// stops holding anything, before others may take over: they do only once
// they have seen its Lease unchanged for the whole duration on their own
// clocks, never trusting the renewTime another clock wrote, so any clock
// offset between replicas is safe (PeerClockSkew reports it) as long as the
// clocks run at the same rate. handover.go has the details.
package shard
