// Package simcluster is the embedded, in-memory cluster the example binary and the
// example controller's tests run on when no real cluster is available.
//
// It is client-go's fake clientset with just enough apiserver behaviour added
// for a controller to run unchanged against it:
//   - creations get a name from metadata.generateName, a UID, a creation
//     timestamp and a resourceVersion;
//   - every write bumps the resourceVersion, and an update carrying a stale
//     resourceVersion fails with a Conflict, as optimistic concurrency does on
//     a real apiserver (the bare fake clientset accepts it silently);
//   - a simulated scheduler and kubelet bind new pods to a few fake nodes and
//     mark them Running and Ready after a configurable delay.
//
// Nothing here is a faithful apiserver: there is no admission, no validation,
// no graceful deletion (a deleted pod disappears at once) and no garbage
// collection. It exists so that `go run` of the example works on a machine
// with no cluster, and everything it prints is labelled SIMULATED.
package simcluster
