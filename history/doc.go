// Package history records a controller's revisions as ControllerRevisions
// and recognises its own objects by template, the parts of upstream's
// pkg/controller/history and the Deployment helpers that StatefulSet-,
// DaemonSet- and Deployment-like controllers copy.
//
//   - ComputeHash, HashControllerRevision, ControllerRevisionName,
//     NewControllerRevision, SortControllerRevisions, EqualRevision and
//     FindEqualRevisions give upstream v1.37's values, byte for byte.
//     DeepHashObject, the rendering they hash, is upstream's
//     pkg/util/hash.DeepHashObject, for controllers that hash objects of
//     their own the same way.
//   - Interface (NewHistory over client-go, NewFakeHistory over an informer
//     for tests) lists, creates (advancing the collision count on a name
//     taken by other data), updates, deletes, adopts and releases revisions,
//     with a context and a deadline on every request. Adoption and release
//     send claim's patches.
//   - FindReplicaSet and FindRevision survive library upgrades: a hash is
//     computed over the Go types of k8s.io/api, so a new minor changes it
//     for every template. They prefer an object whose hash label is current
//     and fall back to TemplatesEquivalent, which ignores the hash label and
//     the values the API server defaults.
//   - The ReplicaSet filters and orders (FilterActiveReplicaSets,
//     ReplicaSetsBySizeNewer, ...) and the label helpers of pkg/util/labels
//     (CloneAndAddLabel, CloneSelectorAndAddLabel, AddLabelToSelector, ...).
//
// Nil entries in slices are skipped or sorted last instead of panicking; a
// nil spec.replicas counts as the API default 1.
package history
