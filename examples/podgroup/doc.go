// Package podgroup is a second example of podset: a minimal custom resource,
// PodGroup (crd.yaml, embedded as CRD), that keeps spec.replicas pods made
// from spec.template and selected by spec.selector, and reports its counts in
// status through the status subresource.
//
// The controller never has a generated Go type for PodGroup: Kind adapts
// unstructured objects from a dynamic informer to podset.Kind and writes
// status through the dynamic client; pods go through a kubernetes.Interface.
// Everything else (expectations, adoption and release, slow-start creates,
// ranked deletes, the worker loop) is podset's, with upstream's ReplicaSet
// semantics.
//
// Build it with New, start the pod and PodGroup informers, then Run. The
// tests run it on simcluster for pods and client-go's dynamic fake client for
// PodGroups (simcluster simulates the typed clientset only); the e2e module
// runs the same controller against a real apiserver with the CRD installed.
package podgroup
