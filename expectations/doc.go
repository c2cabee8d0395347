// Package expectations is a TTL cache of the creations and deletions a
// controller has asked the API server for but has not yet observed through its
// informers. A controller consults it before syncing an owner, so that it never
// acts twice on the same stale cache.
//
// It replaces ControllerExpectations and UIDTrackingControllerExpectations from
// k8s.io/kubernetes/pkg/controller with the same method names and the same
// decisions (signed counters, fulfilled when add <= 0 and del <= 0, expiry
// strictly after the TTL, unknown keys satisfied, observations on unknown keys
// ignored), minus the logger argument: the logger comes from WithLogger.
//
// # Owner identity
//
// Key expectations with OwnerKey(namespace, name, uid) (or OwnerKeyFor /
// OwnerKeyForRef) and keep the plain "namespace/name" as the workqueue key.
// The controller's sync computes OwnerKeyFor(owner); the pod handlers compute
// OwnerKeyForRef(pod.Namespace, controllerRef), which carries the owner's UID.
// An owner deleted and re-created under the same name therefore has a new key
// and never sees its predecessor's record, which simply expires and is
// evicted. ParseOwnerKey reverses OwnerKey.
//
// # Differences from upstream
//
//   - Owner UID binding through OwnerKey fixes the stale record inherited by a
//     re-created owner (kubernetes#142142, volcano#5973).
//   - WithClock and WithTTL: every timestamp and expiry decision uses the
//     injected clock (upstream TODO "Support injection of clock").
//   - Expired records are evicted, lazily on access and by a bounded sweep
//     that rides on writes (no goroutine), so memory follows live owners;
//     upstream's production store keeps every record until DeleteExpectations.
//     Hence GetExpectations reports an expired record as absent, as upstream's
//     TTL test store does. Len and EvictExpired expose this.
//   - A record that expires unfulfilled is logged once, the event behind
//     kubernetes#129795.
//   - ExpectCreationsNamed and CreationObservedNamed track creations by name:
//     an unexpected name does not lower the count and a repeated one lowers it
//     once (upstream TODO #22599, declined PR #136000).
//   - Pending and PendingAll report what a key still waits for and how long.
//   - SetExpectations resets an existing record in place instead of
//     replacing it, so a *ControlleeExpectations from GetExpectations follows
//     its key across re-Sets; a deleted or evicted record is detached and
//     reads as expired. This makes the steady state allocation-free.
//   - UIDTrackingControllerExpectations calls the wrapped cache without
//     holding its lock, GetUIDs returns a copy rather than the live set, and
//     dependent-key sets of vanished records are dropped.
//   - Nil receivers and nil slices give documented neutral values or
//     ErrNilExpectations instead of panics.
//
// # Performance and concurrency
//
// Lookups (SatisfiedExpectations, the Observed calls, Raise, Lower, Get) take
// no lock and hash the key once. Re-setting an existing record locks only
// that record, so workers syncing different owners share no written memory
// (records are padded to whole cache lines for the same reason); inserts,
// deletes and named records lock one of 64 shards. No lock is held while
// calling the clock, the logger or a wrapped cache, and the package starts no
// goroutine.
package expectations
