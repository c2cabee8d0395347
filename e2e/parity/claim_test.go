package parity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	upstream "k8s.io/kubernetes/pkg/controller"
)

// recordingPodControl is one fake for both sides: it satisfies upstream's
// PodControlInterface and ctrlkit's PodControl (same method set), records
// every patch, and answers each pod with the error the case assigned to it.
type recordingPodControl struct {
	errs    map[string]error // by pod name
	patches []string
}

var (
	_ upstream.PodControlInterface = (*recordingPodControl)(nil)
	_ podcontrol.PodControl        = (*recordingPodControl)(nil)
)

func (f *recordingPodControl) PatchPod(_ context.Context, namespace, name string, data []byte) error {
	f.patches = append(f.patches, fmt.Sprintf("%s/%s %s", namespace, name, data))
	return f.errs[name]
}

func (f *recordingPodControl) CreatePods(context.Context, string, *v1.PodTemplateSpec, runtime.Object, *metav1.OwnerReference) error {
	return errors.New("not used")
}

func (f *recordingPodControl) CreatePodsWithGenerateName(context.Context, string, *v1.PodTemplateSpec, runtime.Object, *metav1.OwnerReference, string) error {
	return errors.New("not used")
}

func (f *recordingPodControl) DeletePod(context.Context, string, string, runtime.Object) error {
	return errors.New("not used")
}

// claimCase is one ClaimPods input.
type claimCase struct {
	controller  *appsv1.ReplicaSet
	selector    map[string]string // nil: labels.Everything()
	gvk         schema.GroupVersionKind
	pods        []*v1.Pod
	finalizers  []string
	canAdopt    int // 0: nil func, 1: allows, 2: refuses
	withFilter  bool
	patchErrors map[string]string // pod name -> "notfound" | "invalid" | "conflict" | "plain"
}

// Strings with JSON-sensitive characters, to pin the exact escaping of the
// patch bodies: quotes, backslashes, HTML-escaped runes, control characters,
// non-ASCII and invalid UTF-8.
var trickyStrings = []string{"", "a", "ss1", `ss1"hello`, `back\slash`, "<tag>&amp;", "tab\there", "new\nline", "ünï", "\u2028", "\xff\xfe", "nul\x00", "emoji-😀"}

var (
	labelKeys   = []string{"app", "tier", "env"}
	labelValues = []string{"web", "db", ""}
	namespaces  = []string{"default", "other", ""}
)

func randLabels(r *rand.Rand) map[string]string {
	if r.IntN(6) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, k := range labelKeys {
		if r.IntN(2) == 0 {
			m[k] = oneOf(r, labelValues...)
		}
	}
	return m
}

func genClaimCase(r *rand.Rand) claimCase {
	c := claimCase{
		controller: &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Name:      oneOf(r, "rs", "rs-2", `q"rs`),
			Namespace: oneOf(r, "default", "default", ""),
			// Never empty: ctrlkit refuses to adopt for a controller without
			// a UID, where upstream sends uid "" (DIFFERENCES.md, claim's
			// TestMissingUIDs).
			UID: types.UID(oneOf(r, "owner-uid", "owner-uid", "owner-uid-2", `o"uid`, "<&>")),
		}},
		gvk: oneOf(r,
			appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
			v1.SchemeGroupVersion.WithKind("ReplicationController"),
			schema.GroupVersionKind{Group: "example.com", Version: "v1alpha1", Kind: `We"ird`}),
		canAdopt:    r.IntN(3),
		withFilter:  r.IntN(4) == 0,
		patchErrors: map[string]string{},
	}
	if r.IntN(6) == 0 {
		ts := metav1.NewTime(refNow)
		c.controller.DeletionTimestamp = &ts
	}
	if r.IntN(8) != 0 {
		c.selector = map[string]string{}
		for _, k := range labelKeys[:1+r.IntN(2)] {
			c.selector[k] = oneOf(r, labelValues...)
		}
	}
	for range r.IntN(3) {
		c.finalizers = append(c.finalizers, oneOf(r, "example.com/f", "f2", `fi"n`, "<x>"))
	}
	n := r.IntN(9)
	for i := range n {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("p%d", i),
			Namespace: oneOf(r, namespaces...),
			UID:       types.UID(oneOf(r, trickyStrings...) + fmt.Sprint(i)),
			Labels:    randLabels(r),
		}}
		if r.IntN(2) == 0 && c.selector != nil { // make matching likely
			p.Labels = maps(c.selector, p.Labels)
		}
		if r.IntN(8) == 0 {
			ts := metav1.NewTime(refNow)
			p.DeletionTimestamp = &ts
		}
		t, f := true, false
		for range r.IntN(3) {
			ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "x", UID: oneOf(r, c.controller.UID, "someone-else", c.controller.UID)}
			switch r.IntN(3) {
			case 0:
				ref.Controller = &t
			case 1:
				ref.Controller = &f
			}
			p.OwnerReferences = append(p.OwnerReferences, ref)
		}
		c.pods = append(c.pods, p)
		if r.IntN(4) == 0 {
			c.patchErrors[p.Name] = oneOf(r, "notfound", "invalid", "conflict", "plain", "wrapped-notfound")
		}
	}
	return c
}

// maps merges b over a copy of a.
func maps(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

func patchError(kind, name string) error {
	gr := schema.GroupResource{Resource: "pods"}
	switch kind {
	case "notfound":
		return apierrors.NewNotFound(gr, name)
	case "wrapped-notfound":
		return fmt.Errorf("wrapped: %w", apierrors.NewNotFound(gr, name))
	case "invalid":
		return apierrors.NewInvalid(v1.SchemeGroupVersion.WithKind("Pod").GroupKind(), name, nil)
	case "conflict":
		return apierrors.NewConflict(gr, name, errors.New("changed"))
	case "plain":
		return errors.New("boom")
	}
	return nil
}

// claimOutcome is what one side did with a case.
type claimOutcome struct {
	claimed      []string
	errNil       bool
	patches      []string
	canAdoptRuns int
}

func (o claimOutcome) String() string {
	return fmt.Sprintf("claimed=%q err=%v canAdoptRuns=%d patches:\n      %s", o.claimed, !o.errNil, o.canAdoptRuns, strings.Join(o.patches, "\n      "))
}

func runClaim(c claimCase, ck bool) claimOutcome {
	pc := &recordingPodControl{errs: map[string]error{}}
	for name, kind := range c.patchErrors {
		pc.errs[name] = patchError(kind, name)
	}
	var out claimOutcome
	var canAdopt func(context.Context) error
	switch c.canAdopt {
	case 1:
		canAdopt = func(context.Context) error { out.canAdoptRuns++; return nil }
	case 2:
		canAdopt = func(context.Context) error { out.canAdoptRuns++; return errors.New("controller is being deleted") }
	}
	sel := labels.Everything()
	if c.selector != nil {
		sel = labels.SelectorFromSet(c.selector)
	}
	// Each side gets its own deep copies, so neither can see the other's writes.
	pods := make([]*v1.Pod, len(c.pods))
	for i, p := range c.pods {
		pods[i] = p.DeepCopy()
	}
	ctrl := c.controller.DeepCopy()
	filter := func(p *v1.Pod) bool { return p.Name != "p1" && p.Name != "p4" }
	var filters []func(*v1.Pod) bool
	if c.withFilter {
		filters = append(filters, filter)
	}
	var claimed []*v1.Pod
	var err error
	ctx := context.Background()
	if ck {
		m := claim.NewPodControllerRefManager(pc, ctrl, sel, c.gvk, canAdopt, c.finalizers...)
		claimed, err = m.ClaimPods(ctx, pods, filters...)
	} else {
		m := upstream.NewPodControllerRefManager(pc, ctrl, sel, c.gvk, canAdopt, c.finalizers...)
		claimed, err = m.ClaimPods(ctx, pods, filters...)
	}
	for _, p := range claimed {
		out.claimed = append(out.claimed, p.Name)
	}
	out.errNil = err == nil
	out.patches = pc.patches
	return out
}

func (c claimCase) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "controller ns=%q name=%q uid=%q deleting=%v gvk=%s selector=%v finalizers=%q canAdopt=%d filter=%v\n",
		c.controller.Namespace, c.controller.Name, c.controller.UID, c.controller.DeletionTimestamp != nil, c.gvk, c.selector, c.finalizers, c.canAdopt, c.withFilter)
	for _, p := range c.pods {
		fmt.Fprintf(&b, "  pod %s ns=%q uid=%q labels=%v deleting=%v patchErr=%q owners=", p.Name, p.Namespace, p.UID, p.Labels, p.DeletionTimestamp != nil, c.patchErrors[p.Name])
		for _, o := range p.OwnerReferences {
			ctl := "nil"
			if o.Controller != nil {
				ctl = fmt.Sprint(*o.Controller)
			}
			fmt.Fprintf(&b, "{uid=%q controller=%s}", o.UID, ctl)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestParityClaimPods compares PodControllerRefManager.ClaimPods: the pods
// claimed, whether an error is returned, every patch sent (namespace, name
// and body, byte for byte) and how often CanAdopt ran.
func TestParityClaimPods(t *testing.T) {
	target[claimCase]{
		name: "ClaimPods",
		gen:  genClaimCase,
		check: func(c claimCase) string {
			up, ck := runClaim(c, false), runClaim(c, true)
			if !slices.Equal(up.claimed, ck.claimed) || up.errNil != ck.errNil || !slices.Equal(up.patches, ck.patches) || up.canAdoptRuns != ck.canAdoptRuns {
				return fmt.Sprintf("ctrlkit:\n    %s\nupstream:\n    %s", ck, up)
			}
			return ""
		},
		shrink: func(c claimCase) []claimCase {
			var out []claimCase
			for _, ps := range removeEach(c.pods) {
				d := c
				d.pods = ps
				out = append(out, d)
			}
			if len(c.finalizers) > 0 {
				d := c
				d.finalizers = c.finalizers[:len(c.finalizers)-1]
				out = append(out, d)
			}
			return out
		},
		describe: claimCase.describe,
	}.run(t)
}

type deletePatchCase struct {
	dependent  types.UID
	owners     []types.UID
	finalizers []string
}

// TestParityDeleteOwnerRefPatch compares
// GenerateDeleteOwnerRefStrategicMergeBytes byte for byte, with nil and empty
// owner lists and strings that need JSON escaping.
func TestParityDeleteOwnerRefPatch(t *testing.T) {
	target[deletePatchCase]{
		name: "DeleteOwnerRefPatch",
		gen: func(r *rand.Rand) deletePatchCase {
			c := deletePatchCase{dependent: types.UID(oneOf(r, trickyStrings...))}
			switch n := r.IntN(5); n {
			case 0: // nil owners
			case 1:
				c.owners = []types.UID{}
			default:
				for range n - 1 {
					c.owners = append(c.owners, types.UID(oneOf(r, trickyStrings...)))
				}
			}
			switch r.IntN(4) {
			case 0:
			case 1:
				c.finalizers = []string{}
			default:
				for range 1 + r.IntN(3) {
					c.finalizers = append(c.finalizers, oneOf(r, trickyStrings...))
				}
			}
			return c
		},
		check: func(c deletePatchCase) string {
			got, gotErr := claim.GenerateDeleteOwnerRefStrategicMergeBytes(c.dependent, c.owners, c.finalizers...)
			want, wantErr := upstream.GenerateDeleteOwnerRefStrategicMergeBytes(c.dependent, c.owners, c.finalizers...)
			if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) {
				return fmt.Sprintf("ctrlkit %s (err %v)\nupstream %s (err %v)", got, gotErr, want, wantErr)
			}
			return ""
		},
		describe: func(c deletePatchCase) string {
			return fmt.Sprintf("dependent=%q owners=%#v finalizers=%#v", c.dependent, c.owners, c.finalizers)
		},
	}.run(t)
}
