package simcluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// nameSuffixAlphabet and nameSuffixLength mirror the apiserver's generated
// names: consonants and digits only, so a suffix never spells a word.
const (
	nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"
	nameSuffixLength   = 5
)

// eventHistory is how many past events a watch can resume from, as etcd's
// compaction window. A watch from an older resourceVersion gets 410 Gone,
// which makes an informer relist, as it would against a real apiserver.
const eventHistory = 10000

// loggedEvent is one write, kept so a watch can resume after it.
type loggedEvent struct {
	rv        int64
	gvr       schema.GroupVersionResource
	namespace string
	eventType watch.EventType
	object    runtime.Object
}

// apiTracker wraps the fake clientset's object tracker with what an
// apiserver adds: generated names, UIDs, creation timestamps, one
// resourceVersion counter shared by every kind (as etcd's revision),
// optimistic concurrency, and watches that resume from a resourceVersion and
// never drop or panic. Writes are serialised by mu, so the resourceVersion
// check, the write and the event it sends happen as one step.
type apiTracker struct {
	k8stesting.ObjectTracker

	now    func() time.Time
	scheme *runtime.Scheme // the kinds the store knows, to name what Add is given

	mu       sync.Mutex
	rv       int64
	current  map[schema.GroupVersionResource]map[types.NamespacedName]runtime.Object
	log      []loggedEvent
	oldestRV int64 // a watch from this resourceVersion or later can resume
	watchers map[*relayWatcher]struct{}
	// feeders follow the plain tracker underneath, one per watched kind,
	// for writes made straight to it (fake.Clientset.Tracker()) that never
	// pass through this tracker.
	feeders map[schema.GroupVersionResource]*feeder
	// holds are the resources whose watch delivery is held back
	// (Cluster.HoldWatches).
	holds map[schema.GroupVersionResource]*watchHold
}

// feeder relays the plain tracker's events for one kind while that kind is
// watched.
type feeder struct {
	source  watch.Interface
	watches int
	done    chan struct{}
}

func newAPITracker(inner k8stesting.ObjectTracker, s *runtime.Scheme, now func() time.Time) *apiTracker {
	return &apiTracker{
		ObjectTracker: inner,
		now:           now,
		scheme:        s,
		current:       map[schema.GroupVersionResource]map[types.NamespacedName]runtime.Object{},
		watchers:      map[*relayWatcher]struct{}{},
		feeders:       map[schema.GroupVersionResource]*feeder{},
		holds:         map[schema.GroupVersionResource]*watchHold{},
	}
}

func (t *apiTracker) nextResourceVersion() string {
	t.rv++
	return strconv.FormatInt(t.rv, 10)
}

// record remembers a write that has succeeded and sends it to the open
// watches. mu must be held, and catchUp must
// have run before the write.
func (t *apiTracker) record(gvr schema.GroupVersionResource, namespace, name string, eventType watch.EventType, obj runtime.Object) {
	t.dispatch(gvr, namespace, name, eventType, obj)
}

// dispatch remembers an event and sends it to the open watches. mu must be
// held.
func (t *apiTracker) dispatch(gvr schema.GroupVersionResource, namespace, name string, eventType watch.EventType, obj runtime.Object) {
	obj = obj.DeepCopyObject()
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if eventType == watch.Deleted {
		delete(t.current[gvr], key)
	} else {
		if t.current[gvr] == nil {
			t.current[gvr] = map[types.NamespacedName]runtime.Object{}
		}
		t.current[gvr][key] = obj
	}
	t.log = append(t.log, loggedEvent{rv: t.rv, gvr: gvr, namespace: namespace, eventType: eventType, object: obj})
	if len(t.log) > 2*eventHistory {
		dropped := len(t.log) - eventHistory
		// Events a hold still keeps back stay, however many: a watch
		// opened during the hold must be handed all of them.
		if keep := t.keepFromLocked(); keep >= 0 {
			// The log is in resourceVersion order.
			firstHeld, _ := slices.BinarySearchFunc(t.log, keep, func(e loggedEvent, keep int64) int {
				if e.rv <= keep {
					return -1
				}
				return 1
			})
			dropped = min(dropped, firstHeld)
		}
		if dropped > 0 {
			t.oldestRV = t.log[dropped-1].rv
			t.log = append([]loggedEvent(nil), t.log[dropped:]...)
		}
	}
	for w := range t.watchers {
		if w.wants(gvr, namespace) {
			w.push(eventType, obj)
		}
	}
}

// Add stores an object as it is given (seeding a test), filling in only
// what is missing: a UID and a creation timestamp. It gets a fresh
// resourceVersion and open watches see it added. An object no apiserver
// would store (more than one controller reference) is refused.
func (t *apiTracker) Add(obj runtime.Object) error {
	gvks, _, err := t.scheme.ObjectKinds(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: add: %w", err)
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvks[0])
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: add: %w", err)
	}
	if err := validateOwnerReferences(t.scheme, obj, m, gvr); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.catchUp(gvr)
	if m.GetUID() == "" {
		m.SetUID(uuid.NewUUID())
	}
	if created := m.GetCreationTimestamp(); created.IsZero() {
		m.SetCreationTimestamp(metav1.NewTime(t.now()))
	}
	m.SetResourceVersion(t.nextResourceVersion())
	if err := t.ObjectTracker.Create(gvr, obj, m.GetNamespace()); err != nil {
		return err
	}
	t.record(gvr, m.GetNamespace(), m.GetName(), watch.Added, obj)
	return nil
}

// Create assigns what the apiserver would: a name from generateName, a UID,
// a creation timestamp and a fresh resourceVersion. It refuses an object the
// apiserver's validation would refuse (see validateOwnerReferences).
func (t *apiTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: create %s: %w", gvr.Resource, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.catchUp(gvr)
	generated := m.GetName() == ""
	if generated {
		if m.GetGenerateName() == "" {
			return apierrors.NewBadRequest("simulated apiserver: name or generateName is required")
		}
		m.SetName(m.GetGenerateName() + randomSuffix())
	}
	// The apiserver takes the namespace from the request path; the object
	// sent to watches must carry it too.
	if ns == "" {
		ns = m.GetNamespace()
	} else if m.GetNamespace() == "" {
		m.SetNamespace(ns)
	}
	// Validated after the name is generated, as the apiserver does, so the
	// error names the object.
	if err := validateOwnerReferences(t.scheme, obj, m, gvr); err != nil {
		return err
	}
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(t.now()))
	m.SetResourceVersion(t.nextResourceVersion())
	err = t.ObjectTracker.Create(gvr, obj, ns, opts...)
	// Like the apiserver, try other generated names when one is taken: five
	// random characters collide now and then in a test of a thousand pods.
	for try := 1; generated && apierrors.IsAlreadyExists(err) && try < generateNameAttempts; try++ {
		m.SetName(m.GetGenerateName() + randomSuffix())
		err = t.ObjectTracker.Create(gvr, obj, ns, opts...)
	}
	if err != nil {
		return err
	}
	t.record(gvr, ns, m.GetName(), watch.Added, obj)
	return nil
}

// generateNameAttempts is how many names a create with generateName tries,
// as many as the apiserver does.
const generateNameAttempts = 8

// Update refuses a stale resourceVersion with a Conflict, as a real apiserver
// does; an empty resourceVersion means an unconditional update. Like Create
// it refuses an object the apiserver's validation would refuse.
func (t *apiTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: update %s: %w", gvr.Resource, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.updateLocked(gvr, obj, m, ns, opts...)
}

// updateLocked is Update with mu held.
func (t *apiTracker) updateLocked(gvr schema.GroupVersionResource, obj runtime.Object, m metav1.Object, ns string, opts ...metav1.UpdateOptions) error {
	t.catchUp(gvr)
	if ns == "" {
		ns = m.GetNamespace()
	}
	if _, sent := t.current[gvr][types.NamespacedName{Namespace: ns, Name: m.GetName()}]; sent && t.feeders[gvr] != nil {
		// A raw write to this object whose event the feeder has taken but
		// not yet handled is relayed now, with a new resourceVersion, so
		// that this update is checked against it instead of overwriting it.
		t.relayStored(gvr, ns, m.GetName())
	}
	current, err := t.ObjectTracker.Get(gvr, ns, m.GetName())
	if err != nil {
		return err
	}
	cm, err := meta.Accessor(current)
	if err != nil {
		return fmt.Errorf("simulated apiserver: update %s: %w", gvr.Resource, err)
	}
	if rv := m.GetResourceVersion(); rv != "" && rv != cm.GetResourceVersion() {
		return apierrors.NewConflict(gvr.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	// The apiserver checks the resourceVersion first and validates after.
	if err := validateOwnerReferences(t.scheme, obj, m, gvr); err != nil {
		return err
	}
	// Identity fields are owned by the server, never by the writer.
	m.SetUID(cm.GetUID())
	m.SetCreationTimestamp(cm.GetCreationTimestamp())
	m.SetResourceVersion(t.nextResourceVersion())
	if err := t.ObjectTracker.Update(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.record(gvr, ns, m.GetName(), watch.Modified, obj)
	return nil
}

// Patch receives the already patched object from the fake clientset's
// reaction; it is validated as an update would be and given a new
// resourceVersion. A refused patch leaves the stored object as it was: the
// reaction patched a copy.
func (t *apiTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: patch %s: %w", gvr.Resource, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.catchUp(gvr)
	if ns == "" {
		ns = m.GetNamespace()
	}
	if err := validateOwnerReferences(t.scheme, obj, m, gvr); err != nil {
		return err
	}
	m.SetResourceVersion(t.nextResourceVersion())
	if err := t.ObjectTracker.Patch(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.record(gvr, ns, m.GetName(), watch.Modified, obj)
	return nil
}

// Apply is not supported: server-side apply needs field management the
// simulated apiserver does not have.
func (t *apiTracker) Apply(gvr schema.GroupVersionResource, _ runtime.Object, _ string, _ ...metav1.PatchOptions) error {
	return apierrors.NewMethodNotSupported(gvr.GroupResource(), "apply")
}

// Delete removes the object at once (there is no graceful deletion) and
// sends it to watches with the deletion's resourceVersion.
func (t *apiTracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.catchUp(gvr)
	obj, err := t.ObjectTracker.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	if err := t.ObjectTracker.Delete(gvr, ns, name, opts...); err != nil {
		return err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("simulated apiserver: delete %s: %w", gvr.Resource, err)
	}
	m.SetResourceVersion(t.nextResourceVersion())
	t.dispatch(gvr, ns, name, watch.Deleted, obj)
	return nil
}

// List returns the objects with the list's resourceVersion set to the
// cluster's current one, so an informer's watch resumes right after it.
// While gvr is held, a list with resourceVersion "0" (what a reflector
// sends first, which an apiserver serves from its watch cache) is served
// from the state watches have seen instead: see Cluster.HoldWatches.
func (t *apiTracker) List(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, ns string, opts ...metav1.ListOptions) (runtime.Object, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holds[gvr]; h != nil && len(opts) > 0 && opts[0].ResourceVersion == "0" {
		t.catchUp(gvr)
		return t.heldListLocked(h, gvr, gvk, ns)
	}
	list, err := t.ObjectTracker.List(gvr, gvk, ns, opts...)
	if err != nil {
		return nil, err
	}
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(strconv.FormatInt(t.rv, 10))
	}
	return list, nil
}

// Watch opens a watch on gvr in ns ("" for all namespaces). With an empty
// or "0" resourceVersion it starts with an Added event for every existing
// object, as the apiserver does; with a later one it replays what happened
// since, or fails with 410 Gone when that is older than the kept history.
// While gvr is held, an empty or "0" resourceVersion starts from the state
// when the hold began, and every event since waits for the release (see
// Cluster.HoldWatches).
func (t *apiTracker) Watch(gvr schema.GroupVersionResource, ns string, opts ...metav1.ListOptions) (watch.Interface, error) {
	var from string
	if len(opts) > 0 {
		from = opts[0].ResourceVersion
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w := newRelayWatcher(gvr, ns, t.unregister)
	h := t.holds[gvr]
	replayAfter := int64(-1) // replay the logged events after this resourceVersion
	if from == "" || from == "0" {
		state := t.current[gvr]
		if h != nil {
			// What a watch cache has: the state when the hold began;
			// the events since follow it, held.
			t.catchUp(gvr)
			state, replayAfter = h.view, h.from
		}
		for key, obj := range state {
			if ns == "" || key.Namespace == ns {
				w.push(watch.Added, obj)
			}
		}
	} else {
		rv, err := strconv.ParseInt(from, 10, 64)
		switch {
		case err != nil:
			w.stopLocked()
			return nil, apierrors.NewBadRequest(fmt.Sprintf("simulated apiserver: invalid resourceVersion %q", from))
		case rv < t.oldestRV:
			w.stopLocked()
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, t.oldestRV))
		}
		replayAfter = rv
	}
	if replayAfter >= 0 {
		for _, e := range t.log {
			if h != nil && e.rv > h.from {
				// Events from the hold on wait for its release.
				w.hold()
			}
			if e.rv > replayAfter && w.wants(e.gvr, e.namespace) {
				w.push(e.eventType, e.object)
			}
		}
	}
	if h != nil {
		w.hold()
	}
	if err := t.follow(gvr); err != nil {
		w.stopLocked()
		return nil, err
	}
	t.watchers[w] = struct{}{}
	return w, nil
}

// unregister forgets a stopped watch, and stops following its kind when it
// was the last watch on it.
func (t *apiTracker) unregister(w *relayWatcher) {
	t.mu.Lock()
	delete(t.watchers, w)
	f := t.feeders[w.gvr]
	f.watches--
	if f.watches > 0 {
		t.mu.Unlock()
		return
	}
	delete(t.feeders, w.gvr)
	f.source.Stop()
	t.mu.Unlock()
	<-f.done
}

// follow makes sure a feeder follows gvr on the plain tracker. mu must be
// held.
func (t *apiTracker) follow(gvr schema.GroupVersionResource) error {
	if f := t.feeders[gvr]; f != nil {
		f.watches++
		return nil
	}
	// Without list options the plain tracker replays nothing, so its
	// 100-event buffer starts empty.
	source, err := t.ObjectTracker.Watch(gvr, "")
	if err != nil {
		return err
	}
	f := &feeder{source: source, watches: 1, done: make(chan struct{})}
	t.feeders[gvr] = f
	go func() {
		defer close(f.done)
		for e := range source.ResultChan() {
			t.mu.Lock()
			t.fromPlainTracker(gvr, e)
			t.drain(gvr, f)
			t.mu.Unlock()
		}
	}()
	return nil
}

// catchUp handles what a feeder holds before a write through this tracker,
// so a raw write made before it is relayed before it (but for the one event
// the feeder's goroutine may have taken and not yet handled). mu must be
// held.
func (t *apiTracker) catchUp(gvr schema.GroupVersionResource) {
	if f := t.feeders[gvr]; f != nil {
		t.drain(gvr, f)
	}
}

// drain takes every event the feeder holds without waiting. Each of this
// tracker's writes calls it first (catchUp), so the plain tracker's buffer holds at most the
// writes made straight to it since. mu must be held.
func (t *apiTracker) drain(gvr schema.GroupVersionResource, f *feeder) {
	for {
		select {
		case e, ok := <-f.source.ResultChan():
			if !ok {
				return
			}
			t.fromPlainTracker(gvr, e)
		default:
			return
		}
	}
}

// fromPlainTracker handles one event of the plain tracker by comparing the
// object's stored state with the last state sent to watches: the echo of
// this tracker's own write finds them equal and is skipped; a write made
// straight to the plain tracker is taken into this tracker's
// resourceVersion sequence and sent as the object's current state, so a late
// event can never leave a watcher with a stale object. mu must be held.
func (t *apiTracker) fromPlainTracker(gvr schema.GroupVersionResource, e watch.Event) {
	m, err := meta.Accessor(e.Object)
	if err != nil {
		return
	}
	t.relayStored(gvr, m.GetNamespace(), m.GetName())
}

// relayStored sends the object's stored state to watches if it differs from
// the last state sent, as the state of a write made straight to the plain
// tracker. mu must be held.
func (t *apiTracker) relayStored(gvr schema.GroupVersionResource, ns, name string) {
	sent, known := t.current[gvr][types.NamespacedName{Namespace: ns, Name: name}]
	stored, err := t.ObjectTracker.Get(gvr, ns, name)
	if err != nil {
		if known {
			gone := sent.DeepCopyObject()
			if gm, err := meta.Accessor(gone); err == nil {
				gm.SetResourceVersion(t.nextResourceVersion())
			}
			t.dispatch(gvr, ns, name, watch.Deleted, gone)
		}
		return
	}
	if known && equality.Semantic.DeepEqual(sent, stored) {
		return
	}
	sm, err := meta.Accessor(stored)
	if err != nil {
		return
	}
	sm.SetResourceVersion(t.nextResourceVersion())
	if err := t.ObjectTracker.Update(gvr, stored, ns); err != nil {
		return
	}
	eventType := watch.Modified
	if !known {
		eventType = watch.Added
	}
	t.dispatch(gvr, ns, name, eventType, stored)
}

// openWatches counts the watches not yet stopped.
func (t *apiTracker) openWatches() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.watchers)
}

func randomSuffix() string {
	b := make([]byte, nameSuffixLength)
	for i := range b {
		b[i] = nameSuffixAlphabet[rand.IntN(len(nameSuffixAlphabet))]
	}
	return string(b)
}
