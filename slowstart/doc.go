// Package slowstart runs a number of calls in slow-start batches of 1, 2, 4, ...
// and stops at the first failing batch, so that a controller facing a failing
// API (exhausted quota, a rejecting admission webhook) makes a handful of doomed
// calls per sync instead of thousands.
//
// It replaces slowStartBatch from k8s.io/kubernetes/pkg/controller/replicaset
// and keeps its contract: batch sizes start at initialBatchSize and double,
// capped by what remains; the calls of one batch run concurrently; the first
// batch with a failure ends the run and the successes so far (that batch's
// included) are returned with the error; count <= 0 or initialBatchSize <= 0
// returns (0, nil) without calling fn.
//
// Differences from upstream:
//   - Every error of the failing batch is returned, joined with errors.Join, so
//     errors.Is and errors.As see all of them; upstream returns an arbitrary one.
//   - Once ctx is done no further batch starts; upstream has no context.
//   - WithMaxConcurrency caps how many calls run at the same time.
//   - A batch is run by as few goroutines as keep every call concurrent: a
//     goroutine that finishes a call takes the next unstarted one, and no new
//     goroutine is started once every call of the batch has been taken (helpers
//     start one another as a binary tree, so the start-up is parallel). Calls
//     that block still each get their own goroutine, so concurrency is the
//     same as upstream's goroutine-per-call, but fast calls cost far less.
//   - No goroutine started by Batch outlives the call.
//   - A nil fn is reported as ErrNilFunc instead of panicking; a nil ctx is
//     treated as context.Background().
package slowstart
