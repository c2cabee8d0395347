// Package workerset is a complete controller-runtime controller for a
// custom resource that keeps N custom resources: a WorkerSet owns Workers,
// the MachineSet or VM-pool shape, through childsetcr and childset's
// interchangeable mode (Workers get generated names; a scale-down deletes
// the Workers that are not ready first).
//
// What adapting a new kind costs: adapter.go, the whole of the user code,
// is 59 lines with its imports and comments (34 of code): a SetAdapter
// saying what a WorkerSet wants (its kind, replicas, selector, and the
// Worker to make), a WorkerAdapter saying when a Worker is ready, and
// SetupWithManager. Everything else is childset's: expectations fed from
// the Worker informer, adoption of matching orphans and release of
// Workers that stop matching, slow-start creation, deletion order, events.
// types.go and crd.yaml are the API itself (Go types with hand-written
// DeepCopy methods, and the CustomResourceDefinitions), which a user has
// whatever the controller.
package workerset
