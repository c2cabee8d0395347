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
// with Held().Contains.
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
// up by stopping work first and dropping the claim afterwards. A member that
// could not renew its Lease within the Lease duration minus a safety margin
// stops holding anything, before others may take over; this assumes the
// replicas' clocks differ by less than that margin (WithSafetyMargin).
// handover.go has the details.
package shard
