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
// RBAC: Gangs and their status, pods, and apps/controllerrevisions (get,
// list, watch, create, update, patch, delete).
//
// What adapting a new kind costs: adapter.go, the whole of the user code,
// is 101 lines with its imports and comments (61 lines that are neither
// blank nor comments, imports included): a GangAdapter saying what a Gang
// wants (its rolling update, history limit, collision count and
// minReadySeconds included) and writing its status, a PodAdapter saying
// when a pod is ready and since when, and SetupWithManager choosing
// indexed names. Without rolling updates and status it was 59 lines (36).
// types.go and crd.yaml are the API itself (Go types with hand-written
// DeepCopy methods, and the CustomResourceDefinition).
package gang
