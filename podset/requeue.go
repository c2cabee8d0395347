package podset

import "github.com/ctrlkit/ctrlkit/internal/syncloop"

// Requeue defaults. Upstream requeues every unsuccessful sync through the
// controller's exponential failure backoff; ctrlkit retries the two holds
// that are not the owner's doing differently (the why is written down in
// internal/syncloop):
const (
	// DefaultStaleCachePoll is how often an owner held by the
	// read-your-writes guard is looked at again.
	DefaultStaleCachePoll = syncloop.DefaultStaleCachePoll
	// DefaultUnreachableBackoffCap caps the retry delay after a sync failed
	// because the API server could not be reached or could not answer.
	DefaultUnreachableBackoffCap = syncloop.DefaultUnreachableBackoffCap
)
