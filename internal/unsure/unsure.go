// Package unsure keeps the writes whose outcome is unknown (see
// objectcontrol.OutcomeUnknown) until a later sync resolves them, for the
// set cores (childset and podset) to share.
package unsure

import (
	"context"
	"errors"
	"sync"
	"time"

	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/clock"
)

// Write is a create or a delete whose outcome is unknown.
type Write[T any] struct {
	// Namespace and Name identify the object. A create's name was chosen
	// by the controller: only then can the create be asked about again.
	Namespace, Name string
	// Delete is true for a delete, false for a create.
	Delete bool
	// Named is true for a create expected by name, false for one expected
	// by count.
	Named bool
	// Object is what a create sent, to send again.
	Object T

	since time.Time
}

// Registry holds the unresolved writes of each owner, by owner key. A
// write is forgotten after the TTL, as its expectation is. It is safe for
// concurrent use.
type Registry[T any] struct {
	ttl   time.Duration
	clock clock.PassiveClock

	mu        sync.Mutex
	owners    map[string][]Write[T]
	lastSweep time.Time
}

// New returns an empty Registry forgetting writes ttl after they were
// added, by clk.
func New[T any](ttl time.Duration, clk clock.PassiveClock) *Registry[T] {
	return &Registry[T]{ttl: ttl, clock: clk, owners: map[string][]Write[T]{}, lastSweep: clk.Now()}
}

// Add records w for owner.
func (r *Registry[T]) Add(owner string, w Write[T]) {
	now := r.clock.Now()
	w.since = now
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owners[owner] = append(r.owners[owner], w)
	// Owners that went away leave their writes behind; one sweep per TTL
	// keeps the memory following the live owners.
	if now.Sub(r.lastSweep) >= r.ttl {
		r.lastSweep = now
		for key, ws := range r.owners {
			if ws = r.live(ws, now); len(ws) == 0 {
				delete(r.owners, key)
			} else {
				r.owners[key] = ws
			}
		}
	}
}

// live filters out the writes older than the TTL, in place.
func (r *Registry[T]) live(ws []Write[T], now time.Time) []Write[T] {
	out := ws[:0]
	for _, w := range ws {
		if now.Sub(w.since) < r.ttl {
			out = append(out, w)
		}
	}
	return out
}

// Pending is the number of live writes of owner.
func (r *Registry[T]) Pending(owner string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live(r.owners[owner], r.clock.Now()))
}

// Forget drops the writes of owner: its expectations are met or gone, so
// nothing is waiting for them.
func (r *Registry[T]) Forget(owner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.owners, owner)
}

// Len is the number of owners with writes recorded, live or not.
func (r *Registry[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.owners)
}

// Resolve asks about each live write of owner once, concurrently, through
// ask, which reports whether the write's outcome is now known. The writes
// ask could not resolve stay, keeping their age. Resolve returns how many
// stay and the errors ask returned for them. Only one Resolve of an owner
// may run at a time (a work queue never syncs one owner twice at once).
func (r *Registry[T]) Resolve(ctx context.Context, owner string, ask func(context.Context, Write[T]) (bool, error)) (int, error) {
	r.mu.Lock()
	ws := r.live(r.owners[owner], r.clock.Now())
	delete(r.owners, owner)
	r.mu.Unlock()
	if len(ws) == 0 {
		return 0, nil
	}
	resolved := make([]bool, len(ws))
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() { resolved[i], errs[i] = ask(ctx, w) })
	}
	wg.Wait()
	var left []Write[T]
	for i, w := range ws {
		if !resolved[i] {
			left = append(left, w)
		}
	}
	if len(left) > 0 {
		r.mu.Lock()
		r.owners[owner] = append(r.owners[owner], left...)
		r.mu.Unlock()
	}
	return len(left), errors.Join(errs...)
}

// maxPrefix leaves room for the suffix in a name of at most 63 characters,
// the longest DNS label, as the API server's generateName does.
const (
	suffixLength = 5
	maxPrefix    = 63 - suffixLength
)

// Namer hands out names for new objects: a prefix (cut to leave room) and
// a random suffix from the alphabet the API server's generateName uses. A
// controller that names a create itself can ask again, by that name,
// whether a create of unknown outcome stored the object.
//
// A Namer never hands out a name twice, nor one that taken reports, such
// as a name the cache holds. Five random characters collide often enough
// to matter (about one scale-up of 500 in a hundred draws a name twice),
// and a create answered AlreadyExists is taken for an earlier attempt of
// itself: had two creates drawn one name, the owner would expect a second
// object that never comes, and wait for the expectations' TTL. The API
// server retries its own generateName on a collision; a name chosen here
// must be unique before it is sent.
//
// A Namer is for one sync's creates and is not safe for concurrent use.
type Namer struct {
	taken func(name string) bool
	given map[string]bool
}

// NewNamer returns a Namer that skips the names taken reports; taken may
// be nil.
func NewNamer(taken func(name string) bool) *Namer {
	return &Namer{taken: taken, given: map[string]bool{}}
}

// Name returns a name for a new object, beginning with prefix.
func (n *Namer) Name(prefix string) string {
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	for {
		name := prefix + utilrand.String(suffixLength)
		if !n.given[name] && (n.taken == nil || !n.taken(name)) {
			n.given[name] = true
			return name
		}
	}
}
