// Package podstate holds the small pod predicates every workload controller
// needs: active, terminating, ready, available, restart counts and keys.
//
// It replaces the helpers of k8s.io/kubernetes/pkg/controller and
// k8s.io/kubernetes/pkg/api/v1/pod.
package podstate
