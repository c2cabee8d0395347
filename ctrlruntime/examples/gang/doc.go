// Package gang is a complete controller-runtime controller for a custom
// resource whose pods have identities: a Gang keeps spec.replicas pods
// named <gang>-0 .. <gang>-(n-1), through childsetcr and childset's indexed
// mode. The lowest missing indices are created first and the highest
// deleted first, so the pods held are always a prefix 0..n-1 once settled,
// and a creation is expected by name, so no index is ever held twice.
//
// With spec.strategy.rollingUpdate, a changed template replaces the pods
// in place of their index, highest first, at most maxUnavailable of them
// unavailable at once (a pod is available once ready for
// spec.minReadySeconds); indices below partition stay at the current
// revision. Each template is a ControllerRevision, and a rollback reuses the
// earlier one. The status subresource reports the counts and revisions.
// With spec.lifecycle.preDelete (label, timeoutSeconds), each pod the Gang
// would delete, for a scale-in or a replacement, is marked with the label,
// set to "pending", and deleted only once whatever hands its work over
// changes or removes the label, or the timeout passes
// (childset.DeletionGate); its index stays held meanwhile. RBAC: Gangs and their status, pods, and apps/controllerrevisions (get,
// list, watch, create, update, patch, delete).
//
// What adapting a new kind costs: adapter.go, the whole of the user code,
// is 35 lines with its imports and comments (24 lines that are neither
// blank nor comments, imports included): a GangAdapter whose Describe hands
// childset the Gang's fields (its rolling update, history limit,
// minReadySeconds and pre-delete gate included; the gate costs three
// lines, the time import among them) and its status, which has
// childset.StatusFields' layout, and whose NewChild makes a pod from the
// template; podset.Pods says when a pod is ready and since when, and what changes in place;
// and SetupWithManager chooses indexed names. With a getter per field, a
// SetStatus and a pod adapter of its own it was 101 lines (61).
// types.go and crd.yaml are the API itself (Go types with hand-written
// DeepCopy methods, and the CustomResourceDefinition).
package gang
