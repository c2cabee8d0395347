package syncloop

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Upstream requeues every unsuccessful sync through the controller's
// exponential failure backoff (5 ms doubling up to 1000 s). That is right
// for an owner whose own data keeps failing, but wrong for the two holds
// that are not the owner's doing:
//
//   - A stale informer cache is not a failure. Each stale retry doubled the
//     owner's backoff, so an owner whose cache caught up at 200 s first
//     synced at 328 s. Worse, each took a token from the queue's bucket
//     shared by all owners (10 a second, burst 100): a fast scale-up finds
//     the pod cache a few writes behind after nearly every batch, and a few
//     thousand such retries put the bucket minutes into debt, so the next
//     retry of any owner, for any reason, waited minutes. Polling at a fixed
//     short interval, outside the limiter, resumes an owner within that
//     interval of its cache catching up.
//   - An API server that cannot be reached (restarting, overloaded, behind
//     a broken connection) fails every owner at once. Doubling up to 1000 s
//     meant an owner first retried almost 11 minutes after a 5.5-minute
//     outage. Capping the delay of such failures bounds how long an owner
//     waits after the server answers again.

// requeueReason says why an unsuccessful sync is retried, which decides how.
type requeueReason int

const (
	// requeueFailure: the sync failed for a reason of its own; exponential
	// backoff, as upstream.
	requeueFailure requeueReason = iota
	// requeueStaleCache: the guard holds the owner until the informers
	// catch up; a fixed short poll, and the failure streak is untouched.
	requeueStaleCache
	// requeueUnreachable: the API server did not answer; backoff, capped.
	requeueUnreachable
)

// classify tells why err ended a sync.
func (l *Loop) classify(err error) requeueReason {
	switch {
	case l.IsStaleCache != nil && l.IsStaleCache(err):
		return requeueStaleCache
	case ServerUnreachable(err):
		return requeueUnreachable
	default:
		return requeueFailure
	}
}

// ServerUnreachable reports whether err says the API server could not be
// reached or could not answer in time, rather than that it refused the
// request: connection refused or reset, a connection lost mid-request, a
// write deadline, or the server's own "unavailable", "timeout" and "too
// many requests" answers. Aggregated errors (claims, batches) count when
// any of their errors does, since one unreachable call already says the
// server is away.
func ServerUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if ServerUnreachable(e) {
				return true
			}
		}
		return false
	}
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &netErr):
		return true
	case apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err),
		apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err):
		return true
	}
	return false
}
