// Package podgroup is a complete controller-runtime controller for a custom
// resource that keeps N pods, built from ctrlkit's pieces: the ctrlkit queue
// (ctrlruntime.NewQueue), expectations in the pod handler and in Reconcile
// (expecthandler), adoption and release (claim over crclient), slow-start
// creation (slowstart) and upstream's scale-down order (podranking).
//
// The PodGroup kind is defined by crd.yaml and handled as unstructured
// content, so the example needs no generated code. cmd/podgroup-controller
// runs it in a manager with leader election and the metrics endpoint.
package podgroup
