package consistency

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
	"github.com/ctrlkit/ctrlkit/internal/ttlmap"
)

// SyncedResourceVersioner is the one method the guard needs from an informer
// store: the newest resource version it has applied, or "" when it does not
// know (client-go's AtomicFIFO feature gate is off). Every client-go cache.Store
// has it from v0.36 on; with an older client-go no store has it, and a guard
// over none records nothing and never holds a sync back.
type SyncedResourceVersioner interface {
	LastStoreSyncResourceVersion() string
}

// Guard records the resource versions a controller wrote on behalf of each
// owner and tells the controller, before its next sync of that owner, whether
// every registered store has caught up. Create it with NewGuard.
//
// Owner keys are "namespace/name", optionally followed by "@uid" (the
// expectations package's OwnerKey). Each owner name holds one record, tagged
// with the UID it was written under: a write under another UID replaces it,
// as upstream does for a re-created owner, and a key with a UID only sees a
// record of the same UID, so a re-created owner never waits on its
// predecessor's writes (kubernetes#142142).
//
// A record lives until EnsureReady finds it satisfied, until Clear, or until
// the TTL has passed since the owner's last write.
type Guard struct {
	// ttl and clock are what the options chose; NewGuard builds records
	// and now from them.
	ttl    time.Duration
	clock  clock.PassiveClock
	logger logr.Logger
	// stores is fixed at construction, so it is read without the lock.
	stores map[schema.GroupResource]SyncedResourceVersioner
	now    ttlmap.Clock

	mu sync.Mutex
	// records is by owner name, without the UID. A sweep of the expired
	// records costs one step per record and comes after as many writes,
	// so each write pays a constant share.
	records ttlmap.Table[string, *record]
}

type record struct {
	uid      string
	versions []written     // newest write per resource; owners touch one or two
	wroteAt  time.Duration // offset from the guard's epoch
	writes   uint64        // counts writes, so EnsureReady can tell it raced one
}

// writesPerRecord schedules the sweeps: one write per record kept.
const writesPerRecord = 1

func recordWroteAt(r *record) time.Duration { return r.wroteAt }

type written struct {
	gr schema.GroupResource
	rv string
}

// NewGuard returns a guard over the stores registered with WithStore. A
// guard with no stores records nothing and is always ready, like upstream's
// NoopConsistencyStore.
func NewGuard(opts ...Option) *Guard {
	g := &Guard{
		ttl:    DefaultTTL,
		clock:  clock.RealClock{},
		logger: klog.Background(),
		stores: map[schema.GroupResource]SyncedResourceVersioner{},
	}
	for _, opt := range opts {
		if opt != nil {
			opt(g)
		}
	}
	g.now = ttlmap.NewClock(g.clock)
	g.records = ttlmap.New[string](g.ttl, writesPerRecord, recordWroteAt)
	return g
}

// WroteAt records that the controller wrote an object of resource gr at
// resourceVersion (from the API server's response) on behalf of the owner
// behind ownerKey. Per resource only the newest version is kept. Writes to a
// resource without a registered store, and versions that are not well-formed
// resource versions (they could never be compared), are not recorded.
func (g *Guard) WroteAt(ownerKey string, gr schema.GroupResource, resourceVersion string) {
	if _, ok := g.stores[gr]; !ok {
		return
	}
	if _, err := CompareResourceVersions(resourceVersion, resourceVersion); err != nil {
		return
	}
	name, uid := ownerkey.Split(ownerKey)
	now := g.now.Now()

	g.mu.Lock()
	defer g.mu.Unlock()
	rec, _ := g.records.Get(name)
	if rec == nil || rec.uid != uid || g.records.Expired(rec, now) {
		// Another incarnation's record, or a stale one, says nothing
		// about this write.
		rec = &record{uid: uid}
		g.records.Put(name, rec)
	}
	rec.raise(gr, resourceVersion)
	rec.wroteAt = now
	rec.writes++
	if g.records.Wrote() {
		g.records.Sweep(now, nil)
	}
}

func (r *record) raise(gr schema.GroupResource, rv string) {
	for i := range r.versions {
		if r.versions[i].gr == gr {
			// Both versions are well formed, so the comparison cannot fail.
			if cmp, _ := CompareResourceVersions(rv, r.versions[i].rv); cmp > 0 {
				r.versions[i].rv = rv
			}
			return
		}
	}
	r.versions = append(r.versions, written{gr: gr, rv: rv})
}

// EnsureReady returns nil when the owner behind ownerKey may be synced: it
// has no record, or every registered store has applied at least the newest
// version written for it. Otherwise it returns a *StaleCacheError, which
// matches ErrStaleCache, naming a store that is behind; requeue the owner
// and try again. A satisfied record is dropped, as upstream does.
//
// A store that reports "" or a version that cannot be compared counts as
// caught up, as upstream; a record older than the TTL is dropped, and logged
// if its store was still behind, so no owner is held back forever.
//
// The stores are asked without the guard's lock held, so one store that is
// slow to answer (during a relist) never delays owners without a record.
func (g *Guard) EnsureReady(ownerKey string) error {
	name, uid := ownerkey.Split(ownerKey)
	g.mu.Lock()
	rec, _ := g.records.Get(name)
	if rec == nil || (uid != "" && rec.uid != uid) {
		g.mu.Unlock()
		return nil
	}
	var buf [2]written
	versions := append(buf[:0], rec.versions...)
	wroteAt, writes := rec.wroteAt, rec.writes
	g.mu.Unlock()

	stale := g.firstStale(ownerKey, versions)
	if now := g.now.Now(); g.records.StampExpired(wroteAt, now) {
		if stale != nil {
			g.logger.Info("Informer cache still behind the controller's write after the TTL; syncing the owner anyway",
				"key", ownerKey, "resource", stale.GroupResource.String(), "wroteRV", stale.WroteRV,
				"readRV", stale.ReadRV, "age", now-wroteAt, "ttl", g.ttl)
		}
		stale = nil
	}
	if stale != nil {
		return stale
	}
	g.mu.Lock()
	// A write that landed while the stores were asked is newer than what
	// was checked, so it keeps the record.
	if cur, _ := g.records.Get(name); cur == rec && rec.writes == writes {
		g.records.Delete(name)
	}
	g.mu.Unlock()
	return nil
}

func (g *Guard) firstStale(ownerKey string, versions []written) *StaleCacheError {
	for _, w := range versions {
		read := g.stores[w.gr].LastStoreSyncResourceVersion()
		if read == "" {
			continue
		}
		if cmp, err := CompareResourceVersions(w.rv, read); err == nil && cmp > 0 {
			return &StaleCacheError{OwnerKey: ownerKey, GroupResource: w.gr, WroteRV: w.rv, ReadRV: read}
		}
	}
	return nil
}

// Clear forgets the owner's record, typically from the owner's delete
// handler. A key with a UID clears only a record written under that UID; a
// plain "namespace/name" key clears whatever record the name has, as
// upstream's Clear with an empty UID does.
func (g *Guard) Clear(ownerKey string) {
	name, uid := ownerkey.Split(ownerKey)
	g.mu.Lock()
	defer g.mu.Unlock()
	if rec, _ := g.records.Get(name); rec != nil && (uid == "" || rec.uid == uid) {
		g.records.Delete(name)
	}
}

// Resources returns the resources of the registered stores, sorted: those
// whose writes WroteAt records. A core that writes one resource takes it
// from here, so its caller names it once, in WithStore.
func (g *Guard) Resources() []schema.GroupResource {
	grs := slices.Collect(maps.Keys(g.stores))
	slices.SortFunc(grs, func(a, b schema.GroupResource) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
	})
	return grs
}

// Len returns how many owners have a record, expired ones included until
// they are evicted.
func (g *Guard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.records.Len()
}
