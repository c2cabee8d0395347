// Package gang is a complete controller-runtime controller for a custom
// resource whose pods have identities: a Gang keeps spec.replicas pods
// named <gang>-0 .. <gang>-(n-1), through childsetcr and childset's indexed
// mode. The lowest missing indices are created first and the highest
// deleted first, so the pods held are always a prefix 0..n-1 once settled,
// and a creation is expected by name, so no index is ever held twice.
//
// What adapting a new kind costs: adapter.go, the whole of the user code,
// is 59 lines with its imports and comments (36 of code): a GangAdapter
// saying what a Gang wants, a PodAdapter saying when a pod is ready, and
// SetupWithManager choosing indexed names. types.go and crd.yaml are the
// API itself (Go types with hand-written DeepCopy methods, and the
// CustomResourceDefinition).
package gang
