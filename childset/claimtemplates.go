package childset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/slowstart"
)

// ClaimTemplateSpec is implemented by a Spec whose owners give each
// indexed child PersistentVolumeClaims of its own, as a StatefulSet's
// volumeClaimTemplates and persistentVolumeClaimRetentionPolicy do: a
// child's storage outlives the child, so the replacement of a child (a
// rollout, an eviction) finds the data its index had.
//
// The claims of the child named N are named ClaimName(template, N), one
// per template. Before it creates a child, the core creates the child's
// missing claims, by name, so a retry creates none twice; the child is
// created only once all of them exist. A claim that exists already is
// used as it is, as upstream does, unless it is not the child's to use:
//
//   - controlled by another object, or owned by another owner of the
//     owner's kind: a Warning event (ReasonClaimConflict) and a retry, and
//     the claim is never taken over;
//   - being deleted, or owned by an earlier owner or child of the same
//     name that is gone (the garbage collector is about to delete it): the
//     child waits, and is retried, until the claim is gone and can be
//     created afresh.
//
// The retention policy says which claims the garbage collector deletes,
// through owner references the core sets and removes (never controller
// references: the claims are not the owner's children):
//
//   - WhenDeleted Delete: the claims of the wanted indices refer to the
//     owner, so they go with it;
//   - WhenScaled Delete: before a scale-down deletes a child (its index is
//     at or beyond the replicas), its claims are made to refer to that
//     child alone, so they go with it;
//   - Retain (or empty) for either: no such reference, and one the core
//     added before the policy changed is removed.
//
// A claim the core cannot read from the ClaimReader (not in its cache yet)
// is looked at again by a later sync. Claims need indexed names
// (WithIndexedNames): an owner of an interchangeable set that gives
// templates is refused, as is one with malformed templates
// (ReasonClaimTemplateInvalid), and a claim the API server refuses as
// invalid gets that Warning event too. A claim name that is not a valid
// object name (too long, say) gets a Warning event
// (ReasonClaimNameInvalid). Either way its child is not created, and
// nothing is retried until the owner or its children change. A pod child (C is *v1.Pod) gets a volume named
// after each template that refers to its claim, replacing a volume of that
// name, as upstream's pods do; a child of another kind is told its claims'
// names through a ClaimMounter. NewReconciler panics on a Spec that
// implements ClaimTemplateSpec without WithClaims, or the reverse.
type ClaimTemplateSpec[O Object] interface {
	// ClaimTemplates are owner's claim templates and retention policy; no
	// templates means no claims.
	ClaimTemplates(owner O) ClaimTemplates
}

// ClaimMounter is implemented by a ClaimTemplateSpec whose children, not
// pods, refer to their claims in their spec.
type ClaimMounter[O Object, C Object] interface {
	// MountClaims makes child, a fresh copy named and labelled with its
	// index, refer to its claims: claims maps each template's name to its
	// claim's name.
	MountClaims(owner O, child C, claims map[string]string)
}

// ClaimTemplates are an owner's claim templates and retention policy.
type ClaimTemplates struct {
	// Templates are the claims each child gets, named by ClaimName from
	// each template's name, which must be a DNS-1123 label (a pod's volume
	// is named after it) and unique. A template's labels are kept, the
	// child's own labels added (so the owner's selector finds the claims
	// too); its namespace is the owner's.
	Templates []v1.PersistentVolumeClaim
	// Retention is upstream StatefulSet's policy type; an empty field
	// means Retain.
	Retention appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy
}

// ClaimReader reads claims from an informer cache; an IndexerLister of
// claims is one.
type ClaimReader interface {
	// Get returns the claim called name, and false when the cache has none.
	Get(namespace, name string) (*v1.PersistentVolumeClaim, bool, error)
}

const (
	// ReasonClaimTemplateInvalid is the Warning event of an owner refused
	// for its claim templates, or of a claim the API server refuses as
	// invalid.
	ReasonClaimTemplateInvalid = "ClaimTemplateInvalid"
	// ReasonClaimNameInvalid is the Warning event of a child not created
	// because a claim's name would not be a valid object name.
	ReasonClaimNameInvalid = "ClaimNameInvalid"
	// ReasonClaimConflict is the Warning event of a child not created
	// because a claim of its name belongs to another object.
	ReasonClaimConflict = "ClaimConflict"
)

// ClaimName is the name of the claim of template for the child called
// childName: "<template>-<child>", as a StatefulSet's pod "web-0" has the
// claim "data-web-0".
func ClaimName(template, childName string) string {
	return template + "-" + childName
}

// claimConfig is WithClaims'.
type claimConfig struct {
	writer    objectcontrol.Interface[*v1.PersistentVolumeClaim]
	reader    ClaimReader
	childKind schema.GroupVersionKind
	synced    []cache.InformerSynced
}

// claimParts are the reconciler's: WithClaims' with the writer bounded by
// the write timeout, as every write of the core is.
type claimParts struct {
	writer    deadlineWriter[*v1.PersistentVolumeClaim]
	reader    ClaimReader
	childKind schema.GroupVersionKind
}

// WithClaims gives the core what a Spec that implements ClaimTemplateSpec
// needs: the writer of the claims (an objectcontrol.Control of
// PersistentVolumeClaims), the cache they are read from, and the child
// kind, written into the owner references that delete a scaled-down
// child's claims with it. synced reports whether the claim cache is
// filled (the claim informer's HasSynced); Controller.Run waits for it as
// for the owner and child informers. A claim the cache does not show yet
// is no danger, only a delay: its create is refused as existing, and the
// child waits for the cache. The claim informer's events need not wake
// owners: an owner waiting for a claim looks again on its own. A nil
// writer or reader, or an empty kind, panics.
func WithClaims(writer objectcontrol.Interface[*v1.PersistentVolumeClaim], reader ClaimReader, childKind schema.GroupVersionKind, synced ...cache.InformerSynced) Option {
	if writer == nil || reader == nil || childKind.Kind == "" || childKind.Version == "" {
		panic("childset: WithClaims: nil writer or reader, or no child kind")
	}
	return func(c *config) {
		c.claims = &claimConfig{writer: writer, reader: reader, childKind: childKind, synced: synced}
	}
}

// claimTemplates are owner's claim templates, checked; ok is false when
// the owner has none (or the Spec gives no claims).
func (r *Reconciler[O, C]) claimTemplates(owner O) (ClaimTemplates, bool, *SpecError) {
	if r.claimSpec == nil {
		return ClaimTemplates{}, false, nil
	}
	ct := r.claimSpec.ClaimTemplates(owner)
	if len(ct.Templates) == 0 {
		return ct, false, nil
	}
	refuse := func(format string, args ...any) (ClaimTemplates, bool, *SpecError) {
		return ClaimTemplates{}, false, &SpecError{Reason: ReasonClaimTemplateInvalid, Err: fmt.Errorf(format, args...)}
	}
	if !r.cfg.indexed {
		return refuse("claim templates need indexed children: interchangeable children have no names a claim could keep")
	}
	for _, p := range []appsv1.PersistentVolumeClaimRetentionPolicyType{ct.Retention.WhenDeleted, ct.Retention.WhenScaled} {
		switch p {
		case "", appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		default:
			return refuse("claim retention policy %q is neither %s nor %s", p,
				appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)
		}
	}
	seen := make(map[string]bool, len(ct.Templates))
	for _, t := range ct.Templates {
		if errs := validation.IsDNS1123Label(t.Name); len(errs) > 0 {
			return refuse("claim template name %q: %s", t.Name, strings.Join(errs, "; "))
		}
		if seen[t.Name] {
			return refuse("claim template %q given twice", t.Name)
		}
		seen[t.Name] = true
	}
	return ct, true, nil
}

// wantedRefs are the references a claim wants, by policy.
type wantedRefs struct{ owner, child bool }

// claimRefs are the references a claim of a child wants: a child
// scaled down under WhenScaled Delete refers to the child alone (the
// collector deletes an object only once all its owners are gone);
// otherwise it refers to the owner under WhenDeleted Delete.
func claimRefs(ct ClaimTemplates, scaledDown bool) wantedRefs {
	if scaledDown && ct.Retention.WhenScaled == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return wantedRefs{child: true}
	}
	return wantedRefs{owner: ct.Retention.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
}

// claimStanding is what a claim found in the cache is to a child.
type claimStanding int

const (
	// claimUsable: the child may use it.
	claimUsable claimStanding = iota
	// claimStale: it belongs to a gone owner or child of the same name,
	// and the collector is about to delete it; the child waits.
	claimStale
	// claimForeign: it belongs to another object; never touched.
	claimForeign
)

// standing is what claim is to the child called childName, whose UID is
// childUID (empty for a child not created yet).
func (r *Reconciler[O, C]) standing(claim *v1.PersistentVolumeClaim, owner O, childName string, childUID types.UID) claimStanding {
	if claim.DeletionTimestamp != nil {
		return claimStale
	}
	st := claimUsable
	ownerGK, childGK := r.gvk.GroupKind(), r.claims.childKind.GroupKind()
	for _, ref := range claim.OwnerReferences {
		gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
		switch {
		case ref.UID == owner.GetUID() || (childUID != "" && ref.UID == childUID):
		case gk == ownerGK && ref.Name == owner.GetName(), gk == childGK && ref.Name == childName:
			st = max(st, claimStale)
		case gk == ownerGK, ref.Controller != nil && *ref.Controller:
			return claimForeign
		}
	}
	return st
}

// readyClaims returns the children of fresh (named, indexed children to
// create) whose claims all exist, creating the missing ones, each child
// made to refer to them. The others are left for a later sync: the Result
// asks for one when waiting can help.
func (r *Reconciler[O, C]) readyClaims(ctx context.Context, owner O, fresh []C) ([]C, Result, error) {
	ct, ok, _ := r.claimTemplates(owner)
	if !ok {
		return fresh, Result{}, nil
	}
	logger := klog.FromContext(ctx)
	var res Result
	retry := func() { res.RequeueAfter = r.cfg.conflictRetry }
	type toCreate struct {
		child int
		claim *v1.PersistentVolumeClaim
	}
	var creates []toCreate
	blocked := make([]bool, len(fresh))
	names := make([]map[string]string, len(fresh))
	for i, c := range fresh {
		names[i] = make(map[string]string, len(ct.Templates))
		for t := range ct.Templates {
			tmpl := &ct.Templates[t]
			name := ClaimName(tmpl.Name, c.GetName())
			names[i][tmpl.Name] = name
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				r.warn(owner, ReasonClaimNameInvalid, "Not creating %s: its claim name %q is invalid: %s", c.GetName(), name, strings.Join(errs, "; "))
				blocked[i] = true
				continue
			}
			found, exists, err := r.claims.reader.Get(owner.GetNamespace(), name)
			if err != nil {
				return nil, Result{}, fmt.Errorf("reading claim %s/%s: %w", owner.GetNamespace(), name, err)
			}
			if !exists || found == nil {
				creates = append(creates, toCreate{child: i, claim: r.newClaim(owner, c, tmpl, name, ct)})
				continue
			}
			switch r.standing(found, owner, c.GetName(), "") {
			case claimForeign:
				r.warn(owner, ReasonClaimConflict, "Not creating %s: its claim %s belongs to another object; it is never taken over", c.GetName(), name)
				blocked[i] = true
				retry()
			case claimStale:
				logger.V(2).Info("Waiting for a claim being deleted, or left to the garbage collector, to go", "claim", klog.KObj(found), "child", c.GetName())
				blocked[i] = true
				retry()
			}
		}
	}
	// A child held back already needs none of its claims created now.
	creates = slices.DeleteFunc(creates, func(cr toCreate) bool { return blocked[cr.child] })
	var mu sync.Mutex
	var errs []error
	_, batchErr := slowstart.BatchIndexed(ctx, len(creates), slowstart.InitialBatchSize, func(ctx context.Context, k int) error {
		cr := creates[k]
		_, err := r.claims.writer.Create(ctx, owner.GetNamespace(), cr.claim, owner, nil)
		if err == nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		blocked[cr.child] = true
		switch {
		case apierrors.IsAlreadyExists(err):
			// Not in the cache yet: an earlier create of ours whose
			// answer was lost, or another object's. Only the cache can
			// tell which.
			retry()
			return nil
		case apierrors.IsInvalid(err):
			// Retrying cannot fix the template: the owner's next change
			// (or any sync) tries again.
			r.warn(owner, ReasonClaimTemplateInvalid, "Not creating %s: the API server refuses its claim %s: %v",
				fresh[cr.child].GetName(), cr.claim.Name, err)
			return nil
		}
		errs = append(errs, fmt.Errorf("creating claim %s/%s: %w", owner.GetNamespace(), cr.claim.Name, err))
		return err
	})
	if batchErr != nil {
		// The claims never tried leave their children for later too.
		for _, cr := range creates {
			blocked[cr.child] = true
		}
	}
	ready := fresh[:0:0]
	for i, c := range fresh {
		if blocked[i] {
			continue
		}
		r.mountClaims(owner, c, ct, names[i])
		ready = append(ready, c)
	}
	return ready, res, errors.Join(errs...)
}

// newClaim is template's claim called name for child.
func (r *Reconciler[O, C]) newClaim(owner O, child C, tmpl *v1.PersistentVolumeClaim, name string, ct ClaimTemplates) *v1.PersistentVolumeClaim {
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: owner.GetNamespace(),
			Labels: maps.Clone(tmpl.Labels), Annotations: maps.Clone(tmpl.Annotations),
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if claim.Labels == nil {
		claim.Labels = map[string]string{}
	}
	// The child's labels, which the selector matches, but not its
	// revision's: the claim outlives revisions.
	for k, v := range child.GetLabels() {
		if k != history.ControllerRevisionHashLabel {
			claim.Labels[k] = v
		}
	}
	if claimRefs(ct, false).owner {
		claim.OwnerReferences = []metav1.OwnerReference{r.ownerRef(owner)}
	}
	return claim
}

func (r *Reconciler[O, C]) ownerRef(owner O) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: r.gvk.GroupVersion().String(), Kind: r.gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}
}

func (r *Reconciler[O, C]) childRef(child C) metav1.OwnerReference {
	gvk := r.claims.childKind
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: child.GetName(), UID: child.GetUID()}
}

// mountClaims makes child refer to its claims: a pod by volumes, another
// kind through the Spec's ClaimMounter.
func (r *Reconciler[O, C]) mountClaims(owner O, child C, ct ClaimTemplates, claims map[string]string) {
	if m, ok := r.spec.(ClaimMounter[O, C]); ok {
		m.MountClaims(owner, child, claims)
		return
	}
	if pod, ok := any(child).(*v1.Pod); ok {
		mountPodClaims(&pod.Spec, ct.Templates, claims)
	}
}

// mountPodClaims puts a volume for each template's claim first, in the
// templates' order, in place of any volume of the same name.
func mountPodClaims(spec *v1.PodSpec, templates []v1.PersistentVolumeClaim, claims map[string]string) {
	volumes := make([]v1.Volume, 0, len(templates)+len(spec.Volumes))
	for _, t := range templates {
		volumes = append(volumes, v1.Volume{Name: t.Name, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claims[t.Name]},
		}})
	}
	for _, v := range spec.Volumes {
		if _, templated := claims[v.Name]; !templated {
			volumes = append(volumes, v)
		}
	}
	spec.Volumes = volumes
}

// keepClaimRetention brings the claims of the owner's children that hold a
// wanted index to the retention policy: a policy change, or a child whose
// scale-down was undone before it went, moves the references. Claims not
// in the cache, not the child's, or stale are left alone.
func (r *Reconciler[O, C]) keepClaimRetention(ctx context.Context, owner O, children []C) error {
	ct, ok, _ := r.claimTemplates(owner)
	if !ok {
		return nil
	}
	replicas := wanted(r.spec.Replicas(owner))
	var errs []error
	for _, c := range children {
		if c.GetDeletionTimestamp() != nil {
			continue
		}
		if i := r.indexOf(owner, c); i < 0 || i >= replicas {
			continue
		}
		if err := r.setClaimRefs(ctx, owner, c, ct, claimRefs(ct, false)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// condemnClaims readies the claims of the victims a scale-down deletes
// (index at or beyond the replicas) for their retention policy, and
// returns the victims to delete now: one whose claims could not be set is
// kept, so its claims are not left referring to the owner alone.
func (r *Reconciler[O, C]) condemnClaims(ctx context.Context, owner O, victims []C) ([]C, error) {
	ct, ok, _ := r.claimTemplates(owner)
	if !ok {
		return victims, nil
	}
	replicas := wanted(r.spec.Replicas(owner))
	out := victims[:0:0]
	var errs []error
	for _, c := range victims {
		if i := r.indexOf(owner, c); i >= replicas {
			if err := r.setClaimRefs(ctx, owner, c, ct, claimRefs(ct, true)); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// setClaimRefs gives each claim of child in the cache the references want
// says, and none of the others the core sets.
func (r *Reconciler[O, C]) setClaimRefs(ctx context.Context, owner O, child C, ct ClaimTemplates, want wantedRefs) error {
	var errs []error
	for _, t := range ct.Templates {
		name := ClaimName(t.Name, child.GetName())
		claim, found, err := r.claims.reader.Get(owner.GetNamespace(), name)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading claim %s/%s: %w", owner.GetNamespace(), name, err))
			continue
		}
		if !found || claim == nil || r.standing(claim, owner, child.GetName(), child.GetUID()) != claimUsable {
			continue
		}
		patch, err := r.claimRefsPatch(claim, owner, child, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if patch == nil {
			continue
		}
		if err := r.claims.writer.Patch(ctx, claim.Namespace, claim.Name, patch); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("setting the owner references of claim %s/%s: %w", claim.Namespace, claim.Name, err))
		}
	}
	return errors.Join(errs...)
}

// claimRefsPatch is the patch that gives claim the references want says,
// nil when it has them: a strategic merge patch adds and deletes by UID,
// other references untouched; a JSON merge patch carries the whole list,
// guarded by the resourceVersion. Both carry the claim's UID, so a claim
// re-created meanwhile is not patched.
func (r *Reconciler[O, C]) claimRefsPatch(claim *v1.PersistentVolumeClaim, owner O, child C, want wantedRefs) ([]byte, error) {
	var hasOwner, hasChild bool
	var kept []metav1.OwnerReference
	for _, ref := range claim.OwnerReferences {
		switch {
		case ref.UID == owner.GetUID():
			hasOwner = true
		case child.GetUID() != "" && ref.UID == child.GetUID():
			hasChild = true
		default:
			kept = append(kept, ref)
		}
	}
	if hasOwner == want.owner && hasChild == want.child {
		return nil, nil
	}
	var add []metav1.OwnerReference
	var drop []types.UID
	if want.owner {
		add = append(add, r.ownerRef(owner))
	} else if hasOwner {
		drop = append(drop, owner.GetUID())
	}
	if want.child {
		add = append(add, r.childRef(child))
	} else if hasChild {
		drop = append(drop, child.GetUID())
	}
	meta := map[string]any{"uid": claim.UID}
	if r.claims.writer.PatchType() == types.MergePatchType {
		meta["resourceVersion"] = claim.ResourceVersion
		meta["ownerReferences"] = append(kept, add...)
		return json.Marshal(map[string]any{"metadata": meta})
	}
	refs := make([]any, 0, len(add)+len(drop))
	for _, ref := range add {
		refs = append(refs, ref)
	}
	for _, uid := range drop {
		refs = append(refs, map[string]string{"$patch": "delete", "uid": string(uid)})
	}
	meta["ownerReferences"] = refs
	return json.Marshal(map[string]any{"metadata": meta})
}
