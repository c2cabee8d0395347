// Package slowstart runs a batch of calls in slow-start batches of 1, 2, 4, ...
// and stops at the first failing batch, so that a controller facing a failing
// API (quota, admission) makes few calls instead of thousands.
//
// It replaces slowStartBatch from k8s.io/kubernetes/pkg/controller/replicaset.
package slowstart
