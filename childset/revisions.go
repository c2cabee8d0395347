package childset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/history"
)

// Revisions record an owner's child templates as ControllerRevisions, as a
// StatefulSet's do, for children of any kind:
//
//   - A revision's data is the JSON encoding of the child Spec.NewChild
//     builds (encoding/json, so map keys are sorted and the same template
//     always gives the same bytes); its name is
//     history.ControllerRevisionName(owner, hash), the hash being
//     history.HashControllerRevision of that data with the owner's
//     collision count, as history.NewControllerRevision computes it.
//   - Each child carries history.ControllerRevisionHashLabel with the hash
//     its revision's name ends with. The name, not the revision's own
//     hash label: after a collision the revision is created under the next
//     count's name but keeps the label of the first count, which a
//     colliding revision holds as well.
//   - The update revision records the owner's template: an existing
//     revision with the same data is reused (renumbered as the newest when
//     it is an earlier one, a rollback), else one is created, advancing the
//     collision count while the name is held by other data.
//   - The current revision is the newest other revision that children not
//     being deleted are at; the update revision when there is none.
//   - Revisions no child is at, other than the current and update ones,
//     are pruned beyond the owner's history limit, oldest first.

// revisionHash is the hash a child of revision carries: the end of the
// revision's name. Hashes are encoded without '-', so the last '-' of the
// name ends the owner's prefix.
func revisionHash(revision *appsv1.ControllerRevision) string {
	return revision.Name[strings.LastIndexByte(revision.Name, '-')+1:]
}

func childHash(c Object) string { return c.GetLabels()[history.ControllerRevisionHashLabel] }

// ownedRevisions lists the owner's revisions, oldest first, adopting the
// orphans its selector matches as StatefulSets do, so a re-created owner
// reuses its predecessor's history.
func (r *Reconciler[O, C]) ownedRevisions(ctx context.Context, owner O, selector labels.Selector) ([]*appsv1.ControllerRevision, error) {
	listed, err := r.cfg.history.ListControllerRevisions(ctx, owner, r.gvk, selector)
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ControllerRevision, 0, len(listed))
	checked := false
	for _, rev := range listed {
		if rev == nil {
			continue
		}
		if metav1.GetControllerOfNoCopy(rev) == nil {
			// The same check as before adopting a child, once.
			if !checked {
				if err := r.canAdopt(owner)(ctx); err != nil {
					return nil, fmt.Errorf("adopting revision %s: %w", rev.Name, err)
				}
				checked = true
			}
			adopted, err := r.cfg.history.AdoptControllerRevision(ctx, owner, r.gvk, rev)
			if err != nil {
				return nil, err
			}
			rev = adopted
		}
		out = append(out, rev)
	}
	history.SortControllerRevisions(out)
	return out, nil
}

// updateRevision returns the revision recording template, reusing an
// equal one (renumbered as the newest when it is an earlier one), or
// creating it; count is advanced on each name collision.
func (r *Reconciler[O, C]) updateRevision(ctx context.Context, owner O, template C, revisions []*appsv1.ControllerRevision, count *int32) (rev *appsv1.ControllerRevision, created bool, err error) {
	raw, err := json.Marshal(template)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the child template: %w", err)
	}
	next := int64(1)
	if n := len(revisions); n > 0 {
		next = revisions[n-1].Revision + 1
	}
	candidate, err := history.NewControllerRevision(owner, r.gvk, template.GetLabels(), runtime.RawExtension{Raw: raw}, next, count)
	if err != nil {
		return nil, false, err
	}
	equal := history.FindEqualRevisions(revisions, candidate)
	if len(equal) == 0 {
		rev, err := r.cfg.history.CreateControllerRevision(ctx, owner, candidate, count)
		return rev, err == nil, err
	}
	latest := equal[len(equal)-1]
	if latest == revisions[len(revisions)-1] {
		return latest, false, nil
	}
	// A rollback: the template of an earlier revision again. That revision
	// becomes the newest, so the history keeps one revision per template.
	rev, err = r.cfg.history.UpdateControllerRevision(ctx, latest, next)
	return rev, false, err
}

// withRevision returns revisions with rev in place of the revision of the
// same name, or added, oldest first.
func withRevision(revisions []*appsv1.ControllerRevision, rev *appsv1.ControllerRevision) []*appsv1.ControllerRevision {
	out := slices.DeleteFunc(slices.Clone(revisions), func(r *appsv1.ControllerRevision) bool { return r.Name == rev.Name })
	out = append(out, rev)
	history.SortControllerRevisions(out)
	return out
}

// currentRevision is the newest revision other than update that a child
// of active is at, or update when there is none.
func currentRevision[C Object](revisions []*appsv1.ControllerRevision, update *appsv1.ControllerRevision, active []C) *appsv1.ControllerRevision {
	held := make(map[string]bool)
	for _, c := range active {
		held[childHash(c)] = true
	}
	for _, rev := range slices.Backward(revisions) {
		if rev.Name != update.Name && held[revisionHash(rev)] {
			return rev
		}
	}
	return update
}

// pruneRevisions deletes the oldest revisions that no child is at, other
// than the current and update ones, beyond limit.
func (r *Reconciler[O, C]) pruneRevisions(ctx context.Context, ro *rollout[C], children []C, limit int) error {
	held := map[string]bool{revisionHash(ro.update): true, revisionHash(ro.current): true}
	for _, c := range children {
		held[childHash(c)] = true
	}
	var idle []*appsv1.ControllerRevision
	for _, rev := range ro.revisions {
		if !held[revisionHash(rev)] {
			idle = append(idle, rev)
		}
	}
	var errs []error
	for _, rev := range idle[:max(len(idle)-limit, 0)] {
		// One already gone (a cache behind an earlier prune) is pruned.
		if err := r.cfg.history.DeleteControllerRevision(ctx, rev); !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// decodeTemplate reads the child template a revision records into a new
// C, so children can be created at an older revision.
func decodeTemplate[C Object](revision *appsv1.ControllerRevision, like C) (C, error) {
	var zero C
	t := reflect.TypeOf(like)
	if t == nil || t.Kind() != reflect.Pointer {
		return zero, fmt.Errorf("revision %s: a %T cannot be decoded into", revision.Name, like)
	}
	c, ok := reflect.New(t.Elem()).Interface().(C)
	if !ok {
		return zero, fmt.Errorf("revision %s: cannot make a %T", revision.Name, like)
	}
	if err := json.Unmarshal(revision.Data.Raw, c); err != nil {
		return zero, fmt.Errorf("revision %s: decoding its template: %w", revision.Name, err)
	}
	return c, nil
}
