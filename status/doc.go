// Package status counts replicas and maintains ReplicaSet status and
// conditions, including the status update with a single retry.
//
// It replaces the status helpers of k8s.io/kubernetes/pkg/controller/replicaset.
package status
