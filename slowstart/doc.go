// Package slowstart runs a number of calls in slow-start batches of 1, 2, 4, ...
// and stops at the first failing batch, so that a controller facing a failing
// API (exhausted quota, a rejecting admission webhook) makes a handful of doomed
// calls per sync instead of thousands.
//
// It replaces slowStartBatch from k8s.io/kubernetes/pkg/controller/replicaset
// and keeps its contract: batch sizes start at initialBatchSize and double,
// capped by what remains; the calls of one batch run concurrently, one
// goroutine each; the first batch with a failure ends the run and the
// successes so far (that batch's included) are returned with the error;
// count <= 0 or initialBatchSize <= 0 returns (0, nil) without calling fn.
//
// Use Batch for identical calls (create N pods from one template) and
// BatchIndexed when each call needs its own index (create pod-0 ... pod-N-1).
// WithMaxConcurrency caps how many calls of a batch run at once. Once ctx is
// done no further batch starts; every error of the failing batch is returned,
// joined with errors.Join.
package slowstart
