// Package podgroup is a complete controller-runtime controller for a custom
// resource that keeps N pods: the library's PodGroup example
// (github.com/ctrlkit/ctrlkit/examples/podgroup, whose CRD and Kind it
// reuses) run by podsetcr in a manager. podset supplies expectations,
// adoption and release, slow-start creation and upstream's scale-down
// order; the manager supplies the cache, the client, leader election and
// the metrics endpoint.
//
// cmd/podgroup-controller is the program: a manager with leader election,
// metrics and probes, and SetupWithManager. The hand-written alternative,
// expectations wired into a Reconcile by hand, is expecthandler's Example.
package podgroup
