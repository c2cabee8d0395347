package childset

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/consistency"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/internal/ownermemo"
	"github.com/ctrlkit/ctrlkit/internal/unsure"
	"github.com/ctrlkit/ctrlkit/internal/writedeadline"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/slowstart"
)

// Result is what a sync asks of whoever drives it. A zero Result asks
// nothing: the next event about the owner or its children syncs it again.
type Result struct {
	// RequeueAfter > 0 asks for another sync of the key after this delay:
	// when the expectations holding the owner back expire, or when a name
	// conflict is worth retrying.
	RequeueAfter time.Duration
}

// Reconciler is the pure core: Reconcile decides and performs one sync of
// an owner. It is safe for concurrent use on different keys; a driver
// must not reconcile the same key concurrently (work queues guarantee it).
type Reconciler[O Object, C Object] struct {
	spec   Spec[O, C]
	kind   Kind[C]
	writer deadlineWriter[C]
	gvk    schema.GroupVersionKind
	cfg    config
	order  Order[C] // WithDeletionOrder's; nil for DefaultOrder
	// The optional parts of spec and kind, nil when not implemented.
	traits       TraitSpec[O, C]
	finishedKind FinishedKind[C]
	victims      VictimSpec[O, C]
	inPlace      InPlaceKind[C]
	// inFlight holds the in-place updates the cache does not show yet;
	// refusedInPlace those the API server refused, by the revision.
	inFlight, refusedInPlace *inFlight
	// childResource and ownerResource are the resources of the guard's
	// stores the core records its child writes and status writes under;
	// zero for a resource the guard has no store of.
	childResource, ownerResource schema.GroupResource
	exp                          *expectations.UIDTrackingControllerExpectations
	// unsure holds the creates and deletes whose outcome is unknown
	// (objectcontrol.OutcomeUnknown) until a sync resolves them.
	unsure *unsure.Registry[C]
	// claimMemos holds each owner's claim memo by work key (claimmemo.go).
	claimMemos ownermemo.Store[*claimMemo[C]]
	// claimSpec and claims are the Spec's claim templates and WithClaims'
	// parts (claimtemplates.go); nil and zero without.
	claimSpec ClaimTemplateSpec[O]
	claims    claimParts
}

// NewReconciler returns the core for owners of spec and children of kind,
// written through writer (an *objectcontrol.Control, or objectcontrol.Fake
// in tests): creates, deletes, and the adoption and release patches. A nil
// spec, kind or writer panics, as does a WithDeletionOrder for another
// child type or beside a VictimSpec, a Spec implementing RolloutSpec
// without WithRevisions (or the reverse), a WithReadYourWrites guard with
// stores of other resources than the children's and the owners', and an
// option only New's driver applies (WithQueueName, WithMetricsProvider,
// WithDrainTimeout, WithUnreachableBackoffCap): a host with its own queue
// has its own equivalents.
func NewReconciler[O Object, C Object](spec Spec[O, C], kind Kind[C], writer objectcontrol.Interface[C], opts ...Option) *Reconciler[O, C] {
	switch {
	case spec == nil:
		panic("childset: NewReconciler: nil spec")
	case kind == nil:
		panic("childset: NewReconciler: nil kind")
	case writer == nil:
		panic("childset: NewReconciler: nil writer")
	}
	cfg := newConfig(opts)
	cfg.RefuseDriverOnly("childset")
	if _, rolls := spec.(RolloutSpec[O]); rolls != (cfg.history != nil) {
		panic("childset: NewReconciler: a Spec that implements RolloutSpec needs WithRevisions, and WithRevisions such a Spec")
	}
	r := &Reconciler[O, C]{spec: spec, kind: kind, writer: deadlineWriter[C]{w: writer, timeout: cfg.writeTimeout},
		gvk: spec.GroupVersionKind(), cfg: cfg}
	r.claimSpec, _ = spec.(ClaimTemplateSpec[O])
	if (r.claimSpec != nil) != (cfg.claims != nil) {
		panic("childset: NewReconciler: a Spec that implements ClaimTemplateSpec needs WithClaims, and WithClaims such a Spec")
	}
	if c := cfg.claims; c != nil {
		r.claims = claimParts{writer: deadlineWriter[*v1.PersistentVolumeClaim]{w: c.writer, timeout: cfg.writeTimeout}, reader: c.reader, childKind: c.childKind}
	}
	r.traits, _ = spec.(TraitSpec[O, C])
	r.finishedKind, _ = kind.(FinishedKind[C])
	r.victims, _ = spec.(VictimSpec[O, C])
	r.inPlace, _ = kind.(InPlaceKind[C])
	r.inFlight = &inFlight{ttl: cfg.ttl}
	r.refusedInPlace = &inFlight{ttl: cfg.ttl}
	r.childResource, r.ownerResource = guardResources(cfg.guard, r.gvk)
	if _, ok := cfg.owners.(func(string) ([]O, error)); cfg.owners != nil && !ok {
		var zero O
		panic(fmt.Sprintf("childset: WithOwnerLister: the lister is a %T, the owners are %T", cfg.owners, zero))
	}
	// A nil order is DefaultOrder, read through deletion keys (order.go).
	if cfg.order != nil {
		order, ok := cfg.order.(Order[C])
		if !ok {
			var zero C
			panic(fmt.Sprintf("childset: WithDeletionOrder: the order is a %T, the children are %T", cfg.order, zero))
		}
		if r.victims != nil {
			panic("childset: WithDeletionOrder: the Spec chooses its victims itself (VictimSpec)")
		}
		r.order = order
	}
	r.exp = expectations.NewUIDTrackingControllerExpectations(expectations.NewControllerExpectations(
		expectations.WithTTL(cfg.ttl), expectations.WithClock(cfg.Clock)))
	r.unsure = unsure.New[C](cfg.ttl, cfg.Clock)
	return r
}

// guardResources are the resources of guard's stores the core records its
// writes under: the owners' (by its kind's usual plural) and the other, the
// children's.
func guardResources(guard *consistency.Guard, owner schema.GroupVersionKind) (child, ownerGR schema.GroupResource) {
	if guard == nil {
		return child, ownerGR
	}
	ownerGVR, _ := meta.UnsafeGuessKindToResource(owner)
	grs := guard.Resources()
	for _, gr := range grs {
		if gr == ownerGVR.GroupResource() {
			ownerGR = gr
		}
	}
	for _, gr := range grs {
		if gr == ownerGR {
			continue
		}
		if child != (schema.GroupResource{}) {
			panic(fmt.Sprintf("childset: NewReconciler: WithReadYourWrites: the guard has stores for %v; give it the children's, and the owners' if you like", grs))
		}
		child = gr
	}
	return child, ownerGR
}

// GroupVersionKind is the owners' kind, the Spec's.
func (r *Reconciler[O, C]) GroupVersionKind() schema.GroupVersionKind { return r.gvk }

// Workers is how many owners to sync at once (WithWorkers), for a host that
// runs its own workers.
func (r *Reconciler[O, C]) Workers() int { return r.cfg.Workers }

// StaleCachePoll is how soon an owner held by the read-your-writes guard is
// to be looked at again (WithStaleCachePoll), for a host that applies
// Reconcile's results itself.
func (r *Reconciler[O, C]) StaleCachePoll() time.Duration { return r.cfg.StaleCachePoll }

// Expectations is the core's expectations cache, keyed by
// expectations.OwnerKeyFor(owner). Drivers feed it through the Observe
// methods.
func (r *Reconciler[O, C]) Expectations() *expectations.UIDTrackingControllerExpectations {
	return r.exp
}

// Reconcile syncs the owner behind key ("namespace/name"), as upstream's
// syncReplicaSet does: the read-your-writes check, the expectations gate
// read before the children are listed, the claim, creations or deletions
// toward the wanted number unless some are still expected, and the status.
// A malformed key or a vanished owner is not an error. A refused spec
// records a Warning event, writes the status with Status.SpecErr and
// returns no error: retrying cannot fix it, the owner's next update syncs
// it again. With WithSyncGuard, the whole of it runs under the guard, or
// not at all.
func (r *Reconciler[O, C]) Reconcile(ctx context.Context, key string) (_ Result, err error) {
	if ctx == nil {
		panic("childset: Reconcile: nil context")
	}
	logger := klog.FromContext(ctx)
	start := r.cfg.Clock.Now()
	defer func() {
		took := r.cfg.Clock.Since(start)
		// Checked first so that, at the usual verbosity, the arguments are
		// not evaluated and boxed on every sync.
		if v := logger.V(4); v.Enabled() {
			v.Info("Finished syncing", "kind", r.gvk.Kind, "key", key, "duration", took)
		}
		// Here rather than in a driver, so that every host reports it.
		if m := r.cfg.metrics; m != nil {
			m.ObserveSync(r.gvk.Kind, took, err)
		}
	}()
	if g := r.cfg.syncGuard; g != nil {
		guarded, done, retry, ok := g(ctx, key)
		if !ok {
			logger.V(4).Info("Owner not held by this replica now; skipped", "kind", r.gvk.Kind, "key", key, "retryAfter", retry)
			r.claimMemos.Drop(key)
			return Result{RequeueAfter: max(retry, 0)}, nil
		}
		defer done()
		ctx = guarded
	}
	return r.sync(ctx, key)
}

func (r *Reconciler[O, C]) sync(ctx context.Context, key string) (Result, error) {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil || name == "" {
		logger.Error(err, "Ignoring malformed key", "key", key)
		return Result{}, nil
	}
	// A cache older than our own last write for this owner would show
	// children or a status we have already moved past: wait for it (the
	// error matches consistency.ErrStaleCache).
	if r.guardOn() {
		if err := r.cfg.guard.EnsureReady(key); err != nil {
			return Result{}, err
		}
	}
	owner, err := r.spec.Get(namespace, name)
	if err == nil && isNil(owner) {
		err = apierrors.NewNotFound(schema.GroupResource{Group: r.gvk.Group, Resource: r.gvk.Kind}, name)
	}
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Owner gone", "kind", r.gvk.Kind, "key", key)
		if g := r.cfg.guard; g != nil {
			g.Clear(key)
		}
		r.claimMemos.Drop(key)
		r.inFlight.forget(key)
		r.refusedInPlace.forget(key)
		return Result{}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("getting %s %s: %w", r.gvk.Kind, key, err)
	}
	expKey := expectations.OwnerKeyFor(owner)
	// Read the gate before the children: a child observed after this
	// point cannot make the count look short and trigger an extra create.
	satisfied := r.exp.SatisfiedExpectations(expKey)

	template, err := r.spec.NewChild(owner)
	if err == nil && isNil(template) {
		err = errors.New("the spec built no child")
	}
	if err != nil {
		return Result{}, r.refuse(ctx, owner, key, &SpecError{Reason: ReasonTemplateInvalid, Err: fmt.Errorf("cannot build a child: %w", err)})
	}
	selector, selErr := r.spec.Selector(owner)
	if err := CheckSelector(selector, selErr, template.GetLabels()); err != nil {
		var specErr *SpecError
		errors.As(err, &specErr)
		return Result{}, r.refuse(ctx, owner, key, specErr)
	}
	if _, _, specErr := r.claimTemplates(owner); specErr != nil {
		return Result{}, r.refuse(ctx, owner, key, specErr)
	}

	ref := metav1.NewControllerRef(owner, r.gvk)
	controlled, err := r.kind.ListControlledBy(namespace, ref)
	if err != nil {
		return Result{}, err
	}
	orphans, err := r.kind.ListControlledBy(namespace, nil)
	if err != nil {
		return Result{}, err
	}
	manager := claim.NewObjectControllerRefManager[C](r.patcher(expKey), owner, selector, r.gvk, r.canAdopt(owner))
	seen, err := r.claimChildren(ctx, key, owner, selector, manager, append(controlled, orphans...))
	if err != nil {
		// As upstream, a failed claim stops the sync: a child whose
		// adoption failed would otherwise be replaced by a second one.
		return Result{}, fmt.Errorf("claiming the children of %s %s: %w", r.gvk.Kind, key, err)
	}
	// With rolling updates, the revisions are recorded before any child is
	// created, so every child carries one that exists.
	ro, err := r.prepareRollout(ctx, owner, template, selector, seen.children, seen.active)
	if errors.Is(err, errRefused) {
		return Result{}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("syncing the revisions of %s %s: %w", r.gvk.Kind, key, err)
	}
	var res Result
	var manageErr, claimErr error
	if satisfied {
		// Every write this owner waited for was observed (or expired):
		// none is left to resolve.
		r.unsure.Forget(expKey)
		// The claims of the children that stay follow the policy as it is
		// now; an owner being deleted is left to the garbage collector.
		if owner.GetDeletionTimestamp() == nil {
			claimErr = r.keepClaimRetention(ctx, owner, seen.children)
		}
	}
	switch {
	case !satisfied:
		// Without this an owner whose create is never observed would
		// sleep until some unrelated event; upstream relies on the
		// informer's resync for it.
		res.RequeueAfter = r.untilExpiry(expKey)
		if owner.GetDeletionTimestamp() == nil {
			manageErr = r.resolveUnknown(ctx, owner, ref, expKey)
		}
	case owner.GetDeletionTimestamp() != nil:
	case ro != nil:
		res, manageErr = r.manageRollout(ctx, owner, ro, ref, expKey, seen.children, r.readiness(seen))
	case r.cfg.indexed:
		res, manageErr = r.manageIndexed(ctx, owner, template, ref, expKey, seen.children, seen.active)
	default:
		res, manageErr = r.manageInterchangeable(ctx, owner, template, ref, expKey, seen.active, seen.traits, seen.activeFacts())
	}
	manageErr = errors.Join(manageErr, claimErr)
	// The status counts the children this sync saw, as upstream's does: the
	// writes it just made show in the next sync's.
	again, err := r.writeStatus(ctx, owner, seen, ro, manageErr, nil)
	if err != nil {
		// A failed status write wins over a failed create or delete: both
		// are retried by the next sync.
		return res, fmt.Errorf("updating the status of %s %s: %w", r.gvk.Kind, key, err)
	}
	if manageErr != nil {
		return res, manageErr
	}
	if again > 0 && (res.RequeueAfter == 0 || again < res.RequeueAfter) {
		res.RequeueAfter = again
	}
	return res, nil
}

// refuse handles an owner whose spec the core cannot converge on: it
// records a Warning event and writes the status with Status.SpecErr,
// counting the children the owner already controls; it claims, creates and
// deletes nothing. Only a failed status write is returned, to be retried
// like any failed write: retrying cannot fix the spec, whose next change
// syncs the owner again.
func (r *Reconciler[O, C]) refuse(ctx context.Context, owner O, key string, specErr *SpecError) error {
	r.warn(owner, specErr.Reason, "%v; nothing is created, deleted, adopted or released until the object changes", specErr)
	klog.FromContext(ctx).Error(specErr, "Refusing the owner's spec until it changes", "kind", r.gvk.Kind, "key", key)
	controlled, err := r.kind.ListControlledBy(owner.GetNamespace(), metav1.NewControllerRef(owner, r.gvk))
	if err != nil {
		return err
	}
	var seen claimed[C]
	uid, traitsOf := owner.GetUID(), r.traitReader(owner)
	for _, c := range controlled {
		if ref := metav1.GetControllerOfNoCopy(c); ref == nil || ref.UID != uid || r.finished(c) {
			continue
		}
		kind := verdictActive
		if c.GetDeletionTimestamp() != nil {
			kind = verdictTerminating
		}
		seen.add(c, verdict{kind: kind, traits: traitsOf(c)})
	}
	if _, err := r.writeStatus(ctx, owner, seen, nil, nil, specErr); err != nil {
		return fmt.Errorf("updating the status of %s %s: %w", r.gvk.Kind, key, err)
	}
	return nil
}

// readiness is whether each of the children seen is ready: the active
// ones' from their traits, only those being deleted are read again.
func (r *Reconciler[O, C]) readiness(seen claimed[C]) []bool {
	out := make([]bool, len(seen.children))
	next := 0
	for i, c := range seen.children {
		if c.GetDeletionTimestamp() != nil {
			out[i] = r.kind.Ready(c)
			continue
		}
		out[i] = seen.traits[next].Ready()
		next++
	}
	return out
}

// canAdopt refuses adoption by an owner being deleted, as upstream. A cached
// owner may not show yet that it is being deleted, and adopting then would
// leave children behind the garbage collector; so when the Spec can read
// the owner live (LiveReader), that copy decides, and one with another UID
// (the owner was re-created) refuses too. Otherwise the cached owner
// decides.
func (r *Reconciler[O, C]) canAdopt(owner O) func(context.Context) error {
	live, ok := r.spec.(LiveReader[O])
	if !ok {
		return func(context.Context) error {
			if owner.GetDeletionTimestamp() != nil {
				return fmt.Errorf("%s %s/%s is being deleted; not adopting", r.gvk.Kind, owner.GetNamespace(), owner.GetName())
			}
			return nil
		}
	}
	return claim.RecheckDeletionTimestamp(func(ctx context.Context) (metav1.Object, error) {
		// A read, but one that gates writes: bounded like them, even if
		// the Spec ignores its context.
		fresh, err := writedeadline.Call(ctx, r.cfg.writeTimeout, "re-reading the owner", func(ctx context.Context) (O, error) {
			return live.GetLive(ctx, owner.GetNamespace(), owner.GetName())
		})
		if err == nil && isNil(fresh) {
			err = errors.New("the live read returned nothing")
		}
		if err != nil {
			return nil, err
		}
		if fresh.GetUID() != owner.GetUID() {
			return nil, fmt.Errorf("original %s %s/%s is gone: got uid %v, wanted %v",
				r.gvk.Kind, owner.GetNamespace(), owner.GetName(), fresh.GetUID(), owner.GetUID())
		}
		return fresh, nil
	})
}

// untilExpiry is how long the unfulfilled expectations of key still hold the
// owner back: the driver requeues then, in case the observations never come.
// They expire strictly after the TTL, so it aims just past it.
func (r *Reconciler[O, C]) untilExpiry(key string) time.Duration {
	rep, ok := r.exp.Pending(key)
	if !ok {
		return time.Millisecond
	}
	return max(r.cfg.ttl-rep.Age+time.Millisecond, time.Millisecond)
}

// manageInterchangeable creates or deletes children toward the wanted
// number; traits[i] are active[i]'s, and so are facts.of(i) unless facts
// is the zero view (the claim memo's, see claimed).
func (r *Reconciler[O, C]) manageInterchangeable(ctx context.Context, owner O, template C, ref *metav1.OwnerReference, expKey string, active []C, traits []Traits, facts factsView) (Result, error) {
	logger := klog.FromContext(ctx)
	want := wanted(r.spec.Replicas(owner))
	diff := len(active) - want
	switch {
	case diff < 0:
		n := min(-diff, r.cfg.burst)
		logger.V(2).Info("Too few replicas", "kind", r.gvk.Kind, "owner", klog.KObj(owner), "need", want, "creating", n)
		if err := r.exp.ExpectCreations(expKey, n); err != nil {
			return Result{}, err
		}
		fresh := make([]C, n)
		for i := range fresh {
			fresh[i] = template.DeepCopyObject().(C)
		}
		return Result{}, r.createCounted(ctx, owner, ref, expKey, fresh)
	case diff > 0:
		n := min(diff, r.cfg.burst)
		logger.V(2).Info("Too many replicas", "kind", r.gvk.Kind, "owner", klog.KObj(owner), "need", want, "deleting", n)
		var victims []C
		if r.victims != nil {
			victims = r.victims.Victims(owner, active, traits, n)
		} else {
			ready := make([]bool, len(traits))
			for i, t := range traits {
				ready[i] = t.Ready()
			}
			named := r.markedForDeletion(owner, active, r.namedToDeleteFirst(owner))
			victims = atPositions(active, r.deletionOrderOf(active, ready, facts, named, n))
		}
		return r.deleteChildren(ctx, owner, expKey, victims)
	}
	return Result{}, nil
}

// manageIndexed creates the lowest missing indices or, when none is
// missing, deletes the children holding no wanted name, those a
// ScaleInSpec names first, then the highest index first. A missing name
// held by a foreign object is skipped with an event and a retry; deletions
// wait until it is free. A pass that creates deletes nothing: a
// named-creation record and a deletion record cannot be pending for one
// owner at once, and the created children's events sync the owner again.
func (r *Reconciler[O, C]) manageIndexed(ctx context.Context, owner O, template C, ref *metav1.OwnerReference, expKey string, children, active []C) (Result, error) {
	replicas := wanted(r.spec.Replicas(owner))
	held := make(map[string]bool, len(children))
	for _, c := range children {
		// A child being deleted still holds its name: its index waits.
		held[c.GetName()] = true
	}
	var res Result
	var names []string
	var getErr error
	indices := map[string]int{}
	missing := forMissing(owner.GetName(), replicas, r.cfg.nameFunc, held, func(i int, name string) bool {
		holder, found, err := r.kind.Get(owner.GetNamespace(), name)
		if err != nil {
			getErr = err
			return false
		}
		if found {
			r.nameConflict(owner, name, holder, true)
			res.RequeueAfter = r.cfg.conflictRetry
			return true
		}
		names = append(names, name)
		indices[name] = i
		return len(names) < r.cfg.burst
	})
	if getErr != nil {
		return Result{}, getErr
	}
	if len(names) > 0 {
		fresh := make([]C, len(names))
		for i, name := range names {
			fresh[i] = indexedChild(template, name, indices[name])
		}
		created, err := r.createNamed(ctx, owner, ref, expKey, fresh)
		return Result{RequeueAfter: max(res.RequeueAfter, created.RequeueAfter)}, err
	}
	if missing {
		// Every missing name is held by a foreign object: wait for it.
		return res, nil
	}
	// No name is missing, so every wanted name is held: the walk is as
	// short as forMissing's.
	wantedNames := make(map[string]bool, len(held))
	forWanted(owner.GetName(), replicas, r.cfg.nameFunc, held, func(name string) { wantedNames[name] = true })
	var extras []C
	for _, c := range active {
		if !wantedNames[c.GetName()] {
			extras = append(extras, c)
		}
	}
	if len(extras) == 0 {
		return res, nil
	}
	indexedDeletionOrder(extras)
	// Names choose only among the extras (see ScaleInSpec): a wanted name
	// deleted would be created again.
	namedFirst(r.namedToDeleteFirst(owner), extras)
	deleted, err := r.deleteChildren(ctx, owner, expKey, extras[:min(len(extras), r.cfg.burst)])
	return Result{RequeueAfter: shorter(res.RequeueAfter, deleted.RequeueAfter)}, err
}

func (r *Reconciler[O, C]) create(ctx context.Context, owner O, child C, ref *metav1.OwnerReference) error {
	child.SetNamespace(owner.GetNamespace())
	created, err := r.writer.Create(ctx, owner.GetNamespace(), child, owner, ref)
	if err != nil && apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause) {
		return nil
	}
	if err == nil {
		r.wrote(expectations.OwnerKeyFor(owner), created)
	}
	return err
}

// createNamed creates fresh, children already named, concurrently in
// slow-start batches, expecting each by name; a name not created is no
// longer expected. A name the API server says is taken gets a
// ReasonNameConflict event and a retry. A child whose claims
// (ClaimTemplateSpec) are not all there is neither created nor expected.
func (r *Reconciler[O, C]) createNamed(ctx context.Context, owner O, ref *metav1.OwnerReference, expKey string, fresh []C) (Result, error) {
	fresh, claimRes, claimErr := r.readyClaims(ctx, owner, fresh)
	if len(fresh) == 0 {
		return claimRes, claimErr
	}
	res, err := r.createReady(ctx, owner, ref, expKey, fresh)
	return Result{RequeueAfter: max(res.RequeueAfter, claimRes.RequeueAfter)}, errors.Join(err, claimErr)
}

// createReady is createNamed once the children's claims exist.
func (r *Reconciler[O, C]) createReady(ctx context.Context, owner O, ref *metav1.OwnerReference, expKey string, fresh []C) (Result, error) {
	names := make([]string, len(fresh))
	for i, c := range fresh {
		names[i] = c.GetName()
	}
	if err := r.exp.ExpectCreationsNamed(expKey, names); err != nil {
		return Result{}, err
	}
	var res Result
	var mu sync.Mutex
	done := make(map[string]bool, len(names))
	_, err := slowstart.BatchIndexed(ctx, len(fresh), slowstart.InitialBatchSize, func(ctx context.Context, i int) error {
		name := names[i]
		err := r.create(ctx, owner, fresh[i], ref)
		if apierrors.IsAlreadyExists(err) {
			// The cache had not shown the holder yet.
			var unknown C
			r.nameConflict(owner, name, unknown, false)
			mu.Lock()
			res.RequeueAfter = r.cfg.conflictRetry
			mu.Unlock()
			return nil
		}
		if err == nil || r.keepUnknownCreate(owner, expKey, fresh[i], true, err) {
			mu.Lock()
			done[name] = true
			mu.Unlock()
		}
		return err
	})
	// Names not created (refused, conflicting or never tried) will not be
	// observed: stop expecting them. A name whose create has an unknown
	// outcome stays expected until it is observed or resolved.
	for _, name := range names {
		if !done[name] {
			r.exp.CreationObservedNamed(expKey, name)
		}
	}
	return res, err
}

// createCounted creates fresh, whose creations the caller expects by
// count, in slow-start batches. A create refused, or never tried after a
// batch failed, is no longer expected; one of unknown outcome stays
// expected (keepUnknownCreate).
func (r *Reconciler[O, C]) createCounted(ctx context.Context, owner O, ref *metav1.OwnerReference, expKey string, fresh []C) error {
	namer := unsure.NewNamer(func(name string) bool {
		_, found, err := r.kind.Get(owner.GetNamespace(), name)
		return found && err == nil
	})
	for _, child := range fresh {
		withGeneratedName(owner, child, namer)
	}
	var unknown atomic.Int64
	created, err := slowstart.BatchIndexed(ctx, len(fresh), slowstart.InitialBatchSize, func(ctx context.Context, i int) error {
		child := fresh[i]
		err := r.create(ctx, owner, child, ref)
		if r.keepUnknownCreate(owner, expKey, child, false, err) {
			unknown.Add(1)
		}
		return err
	})
	if missed := len(fresh) - created - int(unknown.Load()); missed > 0 {
		r.exp.LowerExpectations(expKey, missed, 0)
	}
	return err
}

// keepUnknownCreate reports whether err leaves the outcome of creating
// child unknown, and if so records the create for resolveUnknown: its
// expectation stays. The API server may have stored the child and failed
// the request anyway (504, a reset connection, our deadline); lowering the
// expectation then let the next sync, reading a cache that had not seen the
// child yet, create it again, as upstream does.
//
// A counted create's name was chosen here (withGeneratedName), so
// AlreadyExists cannot be another object taking a wanted name: it is
// almost surely an earlier attempt of this very request (client-go resends
// a create answered with Retry-After) that stored the child, and is kept
// as unknown too. A named create's AlreadyExists is a name conflict,
// handled by createNamed.
func (r *Reconciler[O, C]) keepUnknownCreate(owner O, expKey string, child C, named bool, err error) bool {
	if err == nil || !(objectcontrol.OutcomeUnknown(err) || (!named && apierrors.IsAlreadyExists(err))) {
		return false
	}
	r.unsure.Add(expKey, unsure.Write[C]{Namespace: owner.GetNamespace(), Name: child.GetName(), Named: named, Object: child})
	return true
}

// resolveUnknown asks again about the owner's creates and deletes of
// unknown outcome, so that once the API server answers again the owner
// waits for its cache, as after any write, and not for the expectations'
// TTL. It uses only what every host gives the core, the writer, and a
// write that can be repeated without harm:
//
//   - a create is sent again with the same name. The controller chose
//     that name before the first attempt (indexed names, or the random
//     suffix withGeneratedName picks where the API server's generateName
//     was used before), so an earlier attempt that stored the child makes
//     this one fail with AlreadyExists and stores nothing. Success means
//     the first did not store it, and the child the controller wanted now
//     exists. Either way exactly one child carries the name, and its event
//     meets the expectation. A child the cache already shows needs no
//     request; one held by an object the owner does not control will never
//     be observed as the owner's, so it is no longer expected.
//   - a delete is sent again: success or NotFound says the child is gone
//     or going, and its deletion is awaited as after any delete.
//
// Any other answer leaves the write unknown (a refusal of the second
// create does not prove the first stored nothing: admission runs before
// the name is checked); the sync fails, the driver retries it with
// backoff, and the TTL remains the last resort. A listing of the owner's
// children, uncached, would answer for generated names too, but would need
// a live lister from every host, and a second read path to keep right.
func (r *Reconciler[O, C]) resolveUnknown(ctx context.Context, owner O, ref *metav1.OwnerReference, expKey string) error {
	left, err := r.unsure.Resolve(ctx, expKey, func(ctx context.Context, w unsure.Write[C]) (bool, error) {
		if w.Delete {
			err := r.writer.Delete(ctx, w.Namespace, w.Name, owner)
			return err == nil || apierrors.IsNotFound(err), err
		}
		cached, found, err := r.kind.Get(w.Namespace, w.Name)
		if err != nil {
			return false, err
		}
		if found {
			if !metav1.IsControlledBy(cached, owner) {
				r.nameConflict(owner, w.Name, cached, true)
				r.createNotObserved(expKey, w)
			}
			return true, nil
		}
		err = r.create(ctx, owner, w.Object, ref)
		return err == nil || apierrors.IsAlreadyExists(err), err
	})
	if left > 0 {
		return fmt.Errorf("%d creates or deletes of %s %s/%s still of unknown outcome: %w",
			left, r.gvk.Kind, owner.GetNamespace(), owner.GetName(), err)
	}
	return nil
}

// createNotObserved stops expecting the create w, which will never be
// observed.
func (r *Reconciler[O, C]) createNotObserved(expKey string, w unsure.Write[C]) {
	if w.Named {
		r.exp.CreationObservedNamed(expKey, w.Name)
		return
	}
	r.exp.LowerExpectations(expKey, 1, 0)
}

// withGeneratedName readies child for a create with a name chosen here: the
// owner's name (or the template's generateName) and a random suffix, as the
// API server's generateName would give, from namer, which never gives a
// name twice or one the cache holds. Choosing the name lets a create of
// unknown outcome be asked about again (resolveUnknown); generateName is
// kept, so the child records its prefix as before.
func withGeneratedName[O Object, C Object](owner O, child C, namer *unsure.Namer) {
	if child.GetGenerateName() == "" {
		child.SetGenerateName(owner.GetName() + "-")
	}
	child.SetName(namer.Name(child.GetGenerateName()))
}

// indexedChild is a copy of template named name and labelled with index.
func indexedChild[C Object](template C, name string, index int) C {
	child := template.DeepCopyObject().(C)
	child.SetName(name)
	child.SetGenerateName("")
	child.SetLabels(history.CloneAndAddLabel(child.GetLabels(), IndexLabel, strconv.Itoa(index)))
	return child
}

// deleteChildren deletes victims concurrently, expecting each by key; a
// failed delete is no longer expected, and a child already gone is not an
// error. Victims a deletion gate holds are marked, not deleted, and the
// Result asks to look again when the first of them times out.
func (r *Reconciler[O, C]) deleteChildren(ctx context.Context, owner O, expKey string, victims []C) (Result, error) {
	victims, wait, gateErr := r.gateDeletions(ctx, owner, expKey, victims)
	// A scale-down's victims hand their claims over first (WhenScaled).
	victims, claimErr := r.condemnClaims(ctx, owner, victims)
	gateErr = errors.Join(gateErr, claimErr)
	if len(victims) == 0 {
		return Result{RequeueAfter: wait}, gateErr
	}
	if err := r.exp.ExpectDeletions(expKey, childKeys(victims)); err != nil {
		return Result{}, err
	}
	return Result{RequeueAfter: wait}, errors.Join(gateErr, r.sendDeletions(ctx, owner, expKey, victims))
}

// childKeys returns childKey of each of children, cut from one string: one
// allocation instead of one per child, which for a burst of 500 deletions
// were a third of a scale-down's allocations. The expectations keep the
// keys until each deletion is observed, so the string lives as long as its
// last key, a few bytes a child.
func childKeys[C Object](children []C) []string {
	size := 0
	for _, c := range children {
		size += len(c.GetNamespace()) + 1 + len(c.GetName())
	}
	var b strings.Builder
	b.Grow(size)
	for _, c := range children {
		writeChildKey(&b, c)
	}
	all := b.String()
	keys := make([]string, len(children))
	start := 0
	for i, c := range children {
		end := start + len(c.GetName())
		if ns := c.GetNamespace(); ns != "" {
			end += len(ns) + 1
		}
		keys[i] = all[start:end]
		start = end
	}
	return keys
}

// writeChildKey writes childKey(c) to b.
func writeChildKey(b *strings.Builder, c Object) {
	if ns := c.GetNamespace(); ns != "" {
		b.WriteString(ns)
		b.WriteByte('/')
	}
	b.WriteString(c.GetName())
}

// sendDeletions deletes victims, whose deletions the caller expects by
// key, concurrently.
func (r *Reconciler[O, C]) sendDeletions(ctx context.Context, owner O, expKey string, victims []C) error {
	errs := r.writer.deleteAll(ctx, victims, owner)
	for i, err := range errs {
		c := victims[i]
		if objectcontrol.OutcomeUnknown(err) {
			// It may be gone already: its deletion stays expected until
			// observed or resolved (resolveUnknown), or the next sync,
			// reading a cache that still shows it, would delete another
			// child in its place.
			r.unsure.Add(expKey, unsure.Write[C]{Namespace: c.GetNamespace(), Name: c.GetName(), Delete: true})
			continue
		}
		if err != nil {
			r.exp.DeletionObserved(expKey, childKey(c))
			if apierrors.IsNotFound(err) {
				errs[i] = nil
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// nameConflict records that name is held by holder (when known, the cached
// object) which the owner does not control.
func (r *Reconciler[O, C]) nameConflict(owner O, name string, holder C, known bool) {
	msg := "%s %q is held by an object this %s does not control; not creating it until the name is free"
	if known {
		if ctrl := metav1.GetControllerOfNoCopy(holder); ctrl != nil {
			msg = fmt.Sprintf("%%s %%q is controlled by %s %s, not by this %%s; not creating it until the name is free", ctrl.Kind, ctrl.Name)
		}
	}
	r.warn(owner, ReasonNameConflict, msg, "child", name, r.gvk.Kind)
}

func (r *Reconciler[O, C]) warn(owner O, reason, format string, args ...any) {
	if r.cfg.recorder != nil {
		r.cfg.recorder.Eventf(owner, v1.EventTypeWarning, reason, format, args...)
	}
}

// isNil reports whether obj is a nil interface or a nil pointer, which an
// adapter may return by mistake; the core treats it as absent rather than
// panicking on it.
func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func wanted(replicas int32) int { return max(int(replicas), 0) }

func childKey(c Object) string { return cache.MetaObjectToName(c).String() }
