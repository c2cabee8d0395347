package expectations

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/utils/clock"
)

// A read-your-writes guard answers a question the counting expectations
// cannot: "has my informer caught up with the objects I just updated?".
// Counting works for creations and deletions, whose arrival an event handler
// can observe; an update that lands in the cache late is indistinguishable
// from no update at all, so a controller syncing from a stale cache may
// undo or repeat its own work. Kubernetes 1.36 (KEP-5647) answers it with
// ConsistencyStore in kube-controller-manager, which is not importable; this
// is the same idea with the package's owner keys, TTL and clock.
//
// Since client-go v0.36, every cache.Store (and so every informer's
// GetStore and GetIndexer) reports the newest resource version it has
// applied through LastStoreSyncResourceVersion. It returns "" when
// client-go's AtomicFIFO feature gate (beta, on by default in v0.36) is off;
// the guard then never blocks.

// ErrStaleCache is matched (errors.Is) by every *ConsistencyError.
var ErrStaleCache = errors.New("expectations: informer cache is older than the controller's own write")

// SyncedResourceVersioner is the one method the guard needs from an informer
// store. Every client-go v0.36 cache.Store, cache.Indexer and
// cache.ExpirationCache has it, so informer.GetStore() plugs in directly; a
// store that lacks it is simply not registered, and the guard then ignores
// writes to its resource.
type SyncedResourceVersioner interface {
	// LastStoreSyncResourceVersion returns the newest resource version the
	// store has applied, or "" when it does not know.
	LastStoreSyncResourceVersion() string
}

// ConsistencyError is returned by EnsureReady while an informer store has
// not yet reached a resource version the owner's controller wrote.
type ConsistencyError struct {
	// OwnerKey is the key EnsureReady was called with.
	OwnerKey string
	// GroupResource is the resource whose store is behind.
	GroupResource schema.GroupResource
	// WroteRV is the newest resource version written for the owner; ReadRV
	// is what the store has applied so far.
	WroteRV, ReadRV string
}

func (e *ConsistencyError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("expectations: %s cache for owner %q is at resource version %s, behind the write at %s",
		e.GroupResource.String(), e.OwnerKey, e.ReadRV, e.WroteRV)
}

// Is makes errors.Is(err, ErrStaleCache) true for every ConsistencyError.
func (e *ConsistencyError) Is(target error) bool { return target == ErrStaleCache }

// ConsistencyOption configures a ConsistencyGuard. WithStore and WithStores
// are ConsistencyOptions, and so are the package's WithTTL, WithClock and
// WithLogger.
type ConsistencyOption interface {
	applyToGuard(*guardConfig)
}

type guardConfig struct {
	config
	stores map[schema.GroupResource]SyncedResourceVersioner
}

// applyToGuard lets every Option configure a ConsistencyGuard as well.
func (o Option) applyToGuard(c *guardConfig) {
	if o != nil {
		o(&c.config)
	}
}

type storeOption map[schema.GroupResource]SyncedResourceVersioner

func (o storeOption) applyToGuard(c *guardConfig) {
	for gr, s := range o {
		// A store with no resource name or a nil store could never be
		// asked anything useful; dropping it keeps EnsureReady panic-free.
		if gr.Resource == "" || isNilStore(s) {
			continue
		}
		c.stores[gr] = s
	}
}

// WithStore registers the informer store that reflects resource gr; a later
// registration for the same resource wins. A nil store (including a typed
// nil pointer) or an empty gr.Resource is ignored.
func WithStore(gr schema.GroupResource, store SyncedResourceVersioner) ConsistencyOption {
	return storeOption{gr: store}
}

// WithStores registers several stores at once, the shape upstream's
// constructor takes. Invalid entries are ignored as by WithStore.
func WithStores(stores map[schema.GroupResource]SyncedResourceVersioner) ConsistencyOption {
	return storeOption(stores)
}

// maxEvictPerWrite bounds the eviction work one WroteAt may do, so a write
// after a long quiet period does not pay for every record that expired
// meanwhile; the rest goes with the next writes or on access.
const maxEvictPerWrite = 32

// ConsistencyGuard records the resource versions a controller wrote on
// behalf of each owner and tells the controller, before its next sync of
// that owner, whether every registered informer store has caught up. It is
// safe for concurrent use, starts no goroutine, and never calls a store, the
// clock or the logger with its lock held. A nil *ConsistencyGuard is a valid
// guard that records nothing and is always ready, the counterpart of
// upstream's NoopConsistencyStore; so is the zero value, which has no stores.
//
// Records are keyed by owner: give it the same OwnerKey as the counting
// expectations. A record lives until EnsureReady finds it satisfied, until
// Clear, or until the TTL has passed since the owner's last write. The TTL
// is the circuit breaker: a store that stops advancing (an informer that
// died, a watch that cannot resume) holds an owner back for at most one TTL.
type ConsistencyGuard struct {
	ttl    time.Duration
	clock  clock.PassiveClock
	logger logr.Logger
	// stores never changes after construction, so EnsureReady reads it
	// without the lock.
	stores map[schema.GroupResource]SyncedResourceVersioner

	mu sync.Mutex
	// records is keyed by the owner's namespace/name, without the UID, so
	// that each owner name holds at most one record: a new incarnation's
	// first write replaces its predecessor's.
	records map[string]*guardRecord
	// oldest and newest are the ends of a list of records ordered by their
	// last write, which is also their expiry order.
	oldest, newest *guardRecord
}

type guardRecord struct {
	name string // the records key
	uid  string // "" when written under a plain key
	// versions holds the newest written RV per resource; owners touch one
	// or two resources, so a slice beats a map.
	versions []writtenRV
	inline   [1]writtenRV // backs versions for the usual single resource
	stamp    time.Time
	// gen changes on every write, so EnsureReady drops the record only if
	// nothing was written while it compared versions without the lock.
	gen        uint64
	prev, next *guardRecord
}

type writtenRV struct {
	gr schema.GroupResource
	rv string
}

// NewConsistencyGuard returns a guard over the stores registered with
// WithStore or WithStores. A guard without stores is valid and inert.
func NewConsistencyGuard(opts ...ConsistencyOption) *ConsistencyGuard {
	cfg := guardConfig{config: defaultConfig(), stores: map[schema.GroupResource]SyncedResourceVersioner{}}
	for _, o := range opts {
		if o != nil {
			o.applyToGuard(&cfg)
		}
	}
	return &ConsistencyGuard{
		ttl:     cfg.ttl,
		clock:   cfg.clock,
		logger:  cfg.logger,
		stores:  cfg.stores,
		records: map[string]*guardRecord{},
	}
}

// WroteAt records that the controller wrote an object of resource gr at
// resourceVersion (from the API server's response) on behalf of the owner
// behind ownerKey. Per resource only the newest version is kept.
//
// A key with a different UID than the owner's current record starts a fresh
// record, as upstream does for a new owner UID. The call is ignored, with
// nothing stored, when the guard is nil, ownerKey is empty, no store is
// registered for gr, or resourceVersion is not a well-formed resource version
// (such a version could never be compared, so it could never block).
func (g *ConsistencyGuard) WroteAt(ownerKey string, gr schema.GroupResource, resourceVersion string) {
	if g == nil || ownerKey == "" {
		return
	}
	if _, ok := g.stores[gr]; !ok {
		return
	}
	if _, err := resourceversion.CompareResourceVersion(resourceVersion, resourceVersion); err != nil {
		return
	}
	name, uid := splitOwnerKey(ownerKey)
	now := g.now()

	g.mu.Lock()
	defer g.mu.Unlock()
	rec := g.records[name]
	if rec != nil && (rec.uid != uid || g.expired(rec, now)) {
		// Another incarnation's or a stale record: neither says anything
		// about this write.
		g.unlink(rec)
		rec = nil
	}
	if rec == nil {
		rec = &guardRecord{name: name, uid: uid}
		rec.versions = rec.inline[:0]
		if g.records == nil {
			g.records = map[string]*guardRecord{}
		}
		g.records[name] = rec
	} else {
		g.detach(rec)
	}
	rec.raise(gr, resourceVersion)
	rec.stamp = now
	rec.gen++
	g.append(rec)
	g.evictOldest(now, maxEvictPerWrite)
}

func (r *guardRecord) raise(gr schema.GroupResource, rv string) {
	for i := range r.versions {
		if r.versions[i].gr != gr {
			continue
		}
		// Both versions are well formed, so the comparison cannot fail.
		if cmp, _ := resourceversion.CompareResourceVersion(rv, r.versions[i].rv); cmp > 0 {
			r.versions[i].rv = rv
		}
		return
	}
	r.versions = append(r.versions, writtenRV{gr: gr, rv: rv})
}

// EnsureReady returns nil when the owner behind ownerKey may be synced: it
// has no record, or every registered store has applied at least the newest
// version written for it. Otherwise it returns a *ConsistencyError (which
// matches ErrStaleCache) naming the first store found behind; the controller
// should requeue the owner and try again. A satisfied record is dropped, as
// upstream does, so the next check is a plain map miss.
//
// Never blocking forever matters more than blocking every time, so a store
// that reports "" (client-go's AtomicFIFO gate off) or a version that cannot
// be compared counts as caught up, and a record older than the TTL is
// dropped (and logged if it was still not satisfied).
//
// A key carrying a UID (see OwnerKey) only sees a record written under the
// same UID, so a re-created owner never waits on its predecessor's writes
// (kubernetes#142142); a plain "namespace/name" key sees any record for that
// name, as upstream's EnsureReady does.
func (g *ConsistencyGuard) EnsureReady(ownerKey string) error {
	if g == nil || ownerKey == "" {
		return nil
	}
	name, uid := splitOwnerKey(ownerKey)

	// Copy what is needed under the lock; the clock and the stores are
	// asked without it, and the clock only when there is a record.
	var buf [4]writtenRV
	g.mu.Lock()
	rec := g.records[name]
	if rec == nil || (uid != "" && rec.uid != uid) {
		g.mu.Unlock()
		return nil
	}
	versions := append(buf[:0], rec.versions...)
	gen, stamp := rec.gen, rec.stamp
	g.mu.Unlock()

	now := g.now()
	stale := g.firstStale(ownerKey, versions)
	if now.Sub(stamp) > g.timeout() {
		g.dropIfUnchanged(rec, gen)
		if stale != nil {
			g.logger.Info("Informer cache still behind the controller's write after the TTL; syncing the owner anyway",
				"key", ownerKey, "resource", stale.GroupResource.String(), "wroteRV", stale.WroteRV,
				"readRV", stale.ReadRV, "age", now.Sub(stamp), "ttl", g.timeout())
		}
		return nil
	}
	if stale != nil {
		return stale
	}
	g.dropIfUnchanged(rec, gen)
	return nil
}

// dropIfUnchanged removes rec unless a write has touched it since gen was
// read: that write is newer than anything the caller checked.
func (g *ConsistencyGuard) dropIfUnchanged(rec *guardRecord, gen uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.records[rec.name] == rec && rec.gen == gen {
		g.unlink(rec)
	}
}

// Ready is EnsureReady(ownerKey) == nil, for callers that only branch.
func (g *ConsistencyGuard) Ready(ownerKey string) bool {
	return g.EnsureReady(ownerKey) == nil
}

func (g *ConsistencyGuard) firstStale(ownerKey string, versions []writtenRV) *ConsistencyError {
	for _, w := range versions {
		store := g.stores[w.gr]
		if store == nil {
			continue
		}
		read := store.LastStoreSyncResourceVersion()
		if read == "" {
			continue
		}
		cmp, err := resourceversion.CompareResourceVersion(w.rv, read)
		if err == nil && cmp > 0 {
			return &ConsistencyError{OwnerKey: ownerKey, GroupResource: w.gr, WroteRV: w.rv, ReadRV: read}
		}
	}
	return nil
}

// Clear forgets the owner's record, typically from the owner's delete
// handler. A key with a UID clears only a record written under that UID; a
// plain "namespace/name" key clears whatever record the name has, like
// upstream's Clear with an empty UID. Unknown keys are ignored.
func (g *ConsistencyGuard) Clear(ownerKey string) {
	if g == nil || ownerKey == "" {
		return
	}
	name, uid := splitOwnerKey(ownerKey)
	g.mu.Lock()
	defer g.mu.Unlock()
	if rec := g.records[name]; rec != nil && (uid == "" || rec.uid == uid) {
		g.unlink(rec)
	}
}

// Len returns how many owners have a record, expired ones included until
// they are evicted. A nil guard has none.
func (g *ConsistencyGuard) Len() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.records)
}

// EvictExpired removes every record older than the TTL now and returns how
// many it removed. Nothing needs to call it; eviction otherwise rides on
// writes and reads.
func (g *ConsistencyGuard) EvictExpired() int {
	if g == nil {
		return 0
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.evictOldest(now, len(g.records))
}

// expired reports whether rec is strictly older than the TTL, the rule of
// the counting expectations too.
func (g *ConsistencyGuard) expired(rec *guardRecord, now time.Time) bool {
	return now.Sub(rec.stamp) > g.timeout()
}

// now and timeout give the zero-value guard the package defaults.
func (g *ConsistencyGuard) now() time.Time {
	if g.clock == nil {
		return time.Now()
	}
	return g.clock.Now()
}

func (g *ConsistencyGuard) timeout() time.Duration {
	if g.ttl <= 0 {
		return ExpectationsTimeout
	}
	return g.ttl
}

// evictOldest removes up to limit expired records from the old end of the
// list; the caller holds mu. The list is in write order, so the first live
// record ends the walk. (A clock set backwards only delays eviction.)
func (g *ConsistencyGuard) evictOldest(now time.Time, limit int) int {
	n := 0
	for n < limit && g.oldest != nil && g.expired(g.oldest, now) {
		g.unlink(g.oldest)
		n++
	}
	return n
}

// unlink removes rec from the map and the list; the caller holds mu.
func (g *ConsistencyGuard) unlink(rec *guardRecord) {
	if g.records[rec.name] == rec {
		delete(g.records, rec.name)
	}
	g.detach(rec)
}

// detach removes rec from the list only; the caller holds mu.
func (g *ConsistencyGuard) detach(rec *guardRecord) {
	if rec.prev != nil {
		rec.prev.next = rec.next
	} else if g.oldest == rec {
		g.oldest = rec.next
	}
	if rec.next != nil {
		rec.next.prev = rec.prev
	} else if g.newest == rec {
		g.newest = rec.prev
	}
	rec.prev, rec.next = nil, nil
}

// append puts rec at the new end of the list; the caller holds mu.
func (g *ConsistencyGuard) append(rec *guardRecord) {
	rec.prev = g.newest
	if g.newest != nil {
		g.newest.next = rec
	} else {
		g.oldest = rec
	}
	g.newest = rec
}

// splitOwnerKey separates an OwnerKey into the owner's name part and its
// UID; a plain key has no UID. '@' never occurs in names (see OwnerKey).
func splitOwnerKey(key string) (name, uid string) {
	if i := strings.IndexByte(key, '@'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return key, ""
}

func isNilStore(s SyncedResourceVersioner) bool {
	if s == nil {
		return true
	}
	v := reflect.ValueOf(s)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// String summarises the guard for debugging.
func (g *ConsistencyGuard) String() string {
	if g == nil {
		return "ConsistencyGuard(nil)"
	}
	return fmt.Sprintf("ConsistencyGuard{stores: %d, records: %d, ttl: %s}", len(g.stores), g.Len(), g.timeout())
}
