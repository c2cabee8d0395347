package parity

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/history"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/controller"
	upstreamhistory "k8s.io/kubernetes/pkg/controller/history"
	"sigs.k8s.io/randfill"
)

// randomTemplate fills every field of a pod template, nested ones included,
// from r: ComputeHash dumps the whole Go value, so any field can matter. One
// case in four is a small, realistic template instead.
func randomTemplate(r *rand.Rand) *v1.PodTemplateSpec {
	t := &v1.PodTemplateSpec{}
	if r.IntN(4) == 0 {
		t.Labels = map[string]string{"app": oneOf(r, "web", "db", "")}
		for i := range 1 + r.IntN(3) {
			t.Spec.Containers = append(t.Spec.Containers, v1.Container{
				Name:  fmt.Sprintf("c%d", i),
				Image: oneOf(r, "nginx", "nginx:1.25", "busybox@sha256:00"),
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: *resource.NewMilliQuantity(r.Int64N(4000), resource.DecimalSI)}},
			})
		}
		return t
	}
	f := randfill.NewWithSeed(int64(r.Uint64())).NilChance(0.7).NumElements(0, 2).MaxDepth(8).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), oneOf(r, resource.DecimalSI, resource.BinarySI))
		},
	)
	f.Fill(t)
	return t
}

func randomCount(r *rand.Rand) *int32 {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		v := oneOf(r, int32(math.MaxInt32), int32(math.MinInt32), int32(-1))
		return &v
	default:
		v := int32(r.IntN(5))
		return &v
	}
}

type hashCase struct {
	template *v1.PodTemplateSpec
	count    *int32
}

// TestParityComputeHash compares history.ComputeHash with upstream's
// controller.ComputeHash on random templates and collision counts.
func TestParityComputeHash(t *testing.T) {
	target[hashCase]{
		name:    "ComputeHash",
		divisor: 10,
		gen:     func(r *rand.Rand) hashCase { return hashCase{randomTemplate(r), randomCount(r)} },
		check: func(c hashCase) string {
			if got, want := history.ComputeHash(c.template, c.count), controller.ComputeHash(c.template, c.count); got != want {
				return fmt.Sprintf("ComputeHash = %s, upstream %s", got, want)
			}
			return ""
		},
		describe: func(c hashCase) string {
			return fmt.Sprintf("count=%s template=%s", ptrString(c.count), jsonString(c.template))
		},
	}.run(t)
}

// revisionCase is a small population of revisions whose data, numbers,
// creation times and names collide often.
type revisionCase struct {
	parent    *appsv1.StatefulSet
	labels    map[string]string
	revisions []*appsv1.ControllerRevision
	probe     *int32
	prefix    string
}

var revisionKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

func genRevisionCase(r *rand.Rand) revisionCase {
	c := revisionCase{
		parent: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{
			Name: oneOf(r, "db", "web", strings.Repeat("n", 200+r.IntN(100))), Namespace: "ns", UID: types.UID(fmt.Sprintf("u%d", r.IntN(3)))}},
		probe:  randomCount(r),
		prefix: strings.Repeat(oneOf(r, "a", "é"), r.IntN(260)),
	}
	if r.IntN(3) > 0 {
		c.labels = map[string]string{"app": "db", oneOf(r, "tier", history.ControllerRevisionHashLabel): "x"}
	}
	times := []metav1.Time{{}, metav1.NewTime(refNow), metav1.NewTime(refNow.Add(time.Second)), metav1.NewTime(refNow.Add(time.Nanosecond))}
	for i := range r.IntN(8) {
		cr := &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: oneOf(r, "a", "b", "c", fmt.Sprintf("r%d", i)), CreationTimestamp: oneOf(r, times...)},
			Revision:   int64(r.IntN(4)) - 1,
		}
		switch r.IntN(5) {
		case 0:
			// empty data
		case 1:
			cr.Data.Object = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: oneOf(r, "p", "q")}}
			if r.IntN(2) == 0 {
				cr.Data.Raw = []byte(`{"ignored":true}`)
			}
		default:
			cr.Data.Raw = []byte(oneOf(r, `{"a":1}`, `{"a":2}`, `{"a": 1}`, `[]`))
		}
		c.revisions = append(c.revisions, cr)
	}
	return c
}

// TestParityRevisions compares the pure functions of history with upstream's
// pkg/controller/history: hashes with probes, names (truncation included),
// NewControllerRevision, the sort order with ties, EqualRevision on every
// pair and FindEqualRevisions for every needle.
func TestParityRevisions(t *testing.T) {
	target[revisionCase]{
		name:    "Revisions",
		divisor: 10,
		gen:     genRevisionCase,
		check: func(c revisionCase) string {
			if got, want := history.ControllerRevisionName(c.prefix, "h"), upstreamhistory.ControllerRevisionName(c.prefix, "h"); got != want {
				return fmt.Sprintf("ControllerRevisionName = %q, upstream %q", got, want)
			}
			for i, cr := range c.revisions {
				if got, want := history.HashControllerRevision(cr, c.probe), upstreamhistory.HashControllerRevision(cr, c.probe); got != want {
					return fmt.Sprintf("HashControllerRevision(#%d, probe %s) = %s, upstream %s", i, ptrString(c.probe), got, want)
				}
				got, err1 := history.NewControllerRevision(c.parent, revisionKind, c.labels, cr.Data, cr.Revision, c.probe)
				want, err2 := upstreamhistory.NewControllerRevision(c.parent, revisionKind, c.labels, cr.Data, cr.Revision, c.probe)
				if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(got, want) {
					return fmt.Sprintf("NewControllerRevision(#%d) = %+v (%v), upstream %+v (%v)", i, got, err1, want, err2)
				}
				for j, other := range c.revisions {
					if g, w := history.EqualRevision(cr, other), upstreamhistory.EqualRevision(cr, other); g != w {
						return fmt.Sprintf("EqualRevision(#%d, #%d) = %v, upstream %v", i, j, g, w)
					}
				}
				if g, w := history.EqualRevision(cr, nil), upstreamhistory.EqualRevision(cr, nil); g != w {
					return fmt.Sprintf("EqualRevision(#%d, nil) = %v, upstream %v", i, g, w)
				}
				if g, w := history.FindEqualRevisions(c.revisions, cr), upstreamhistory.FindEqualRevisions(c.revisions, cr); !slices.Equal(g, w) {
					return fmt.Sprintf("FindEqualRevisions(#%d) = %v, upstream %v", i, revNames(g), revNames(w))
				}
			}
			ours, theirs := slices.Clone(c.revisions), slices.Clone(c.revisions)
			history.SortControllerRevisions(ours)
			upstreamhistory.SortControllerRevisions(theirs)
			if !slices.Equal(ours, theirs) {
				return fmt.Sprintf("SortControllerRevisions = %v, upstream %v", revNames(ours), revNames(theirs))
			}
			return ""
		},
		shrink: func(c revisionCase) []revisionCase {
			var out []revisionCase
			for _, rs := range removeEach(c.revisions) {
				d := c
				d.revisions = rs
				out = append(out, d)
			}
			return out
		},
		describe: func(c revisionCase) string {
			var b strings.Builder
			fmt.Fprintf(&b, "parent=%s probe=%s prefix len %d labels=%v\n", c.parent.Name, ptrString(c.probe), len(c.prefix), c.labels)
			for i, cr := range c.revisions {
				fmt.Fprintf(&b, "#%d %s rev=%d created=%s raw=%q object=%v\n", i, cr.Name, cr.Revision, timeString(cr.CreationTimestamp), cr.Data.Raw, cr.Data.Object != nil)
			}
			return b.String()
		},
	}.run(t)
}

// historyCase is a namespace's existing revisions and one revision to create:
// the names the new revision hashes to at collision counts 0, 1, 2... are
// taken by revisions with other or equal data.
type historyCase struct {
	parent   *appsv1.StatefulSet
	existing []*appsv1.ControllerRevision
	data     string
	count    int32
	indexed  bool
}

func genHistoryCase(r *rand.Rand) historyCase {
	parent := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "owner"}}
	c := historyCase{parent: parent, data: fmt.Sprintf(`{"v":%d}`, r.IntN(3)), count: int32(r.IntN(3)), indexed: r.IntN(2) == 0}
	probe := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(c.data)}}
	taken := r.IntN(5)
	for k := range taken {
		cc := c.count + int32(k)
		name := history.ControllerRevisionName(parent.Name, history.HashControllerRevision(probe, &cc))
		data := fmt.Sprintf(`{"other":%d}`, k)
		if k == taken-1 && r.IntN(3) == 0 {
			data = c.data // the last taken name holds the very same data
		}
		c.existing = append(c.existing, historyRevision(r, name, data, parent))
	}
	for i := range r.IntN(4) {
		c.existing = append(c.existing, historyRevision(r, fmt.Sprintf("extra-%d", i), c.data, parent))
	}
	return c
}

func historyRevision(r *rand.Rand, name, data string, parent *appsv1.StatefulSet) *appsv1.ControllerRevision {
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": oneOf(r, "db", "db", "other")}},
		Data:     runtime.RawExtension{Raw: []byte(data)},
		Revision: int64(r.IntN(3)),
	}
	switch r.IntN(3) {
	case 0:
		cr.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(parent, revisionKind)}
	case 1:
		other := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "other-uid"}}
		cr.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(other, revisionKind)}
	}
	return cr
}

// historyWorld is one implementation's clientset and informer store.
type historyWorld struct {
	client *fake.Clientset
	inf    informers.SharedInformerFactory
}

func newHistoryWorld(objs []*appsv1.ControllerRevision, indexed bool) (historyWorld, error) {
	var rt []runtime.Object
	for _, o := range objs {
		rt = append(rt, o.DeepCopy())
	}
	// NewClientset builds a field manager from the whole OpenAPI schema per
	// clientset, ~80 ms each; the simple clientset is what upstream's own
	// history tests use.
	w := historyWorld{client: fake.NewSimpleClientset(rt...)} //nolint:staticcheck // see above
	w.inf = informers.NewSharedInformerFactory(w.client, 0)
	crInf := w.inf.Apps().V1().ControllerRevisions().Informer()
	if indexed {
		if err := upstreamhistory.AddControllerRevisionControllerIndexer(crInf); err != nil {
			return w, err
		}
	}
	for _, o := range objs {
		if err := crInf.GetIndexer().Add(o.DeepCopy()); err != nil {
			return w, err
		}
	}
	return w, nil
}

// TestParityHistory runs upstream's NewHistory and ctrlkit's over identical
// fake clientsets: listing (with and without the controller index),
// creation through name collisions, update, adoption and release (the patch
// bodies byte for byte), and deletion.
func TestParityHistory(t *testing.T) {
	ctx := context.Background()
	sel := labels.SelectorFromSet(labels.Set{"app": "db"})
	var collided, reused int // cases that bumped the count, that returned an existing revision
	target[historyCase]{
		name:    "History",
		divisor: 10,
		gen:     genHistoryCase,
		check: func(c historyCase) string {
			ow, err := newHistoryWorld(c.existing, c.indexed)
			if err != nil {
				return err.Error()
			}
			uw, err := newHistoryWorld(c.existing, c.indexed)
			if err != nil {
				return err.Error()
			}
			var opts []history.Option
			var upIndexer = uw.inf.Apps().V1().ControllerRevisions().Informer().GetIndexer()
			if c.indexed {
				opts = append(opts, history.WithIndexer(ow.inf.Apps().V1().ControllerRevisions().Informer().GetIndexer()))
			} else {
				upIndexer = nil
			}
			ours := history.NewHistory(ow.client, ow.inf.Apps().V1().ControllerRevisions().Lister(), opts...)
			theirs := upstreamhistory.NewHistory(uw.client, uw.inf.Apps().V1().ControllerRevisions().Lister(), upIndexer)

			gotList, err1 := ours.ListControllerRevisions(ctx, c.parent, revisionKind, sel)
			wantList, err2 := theirs.ListControllerRevisions(c.parent, revisionKind, sel)
			sortByName(gotList)
			sortByName(wantList)
			if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(gotList, wantList) {
				return fmt.Sprintf("ListControllerRevisions = %v (%v), upstream %v (%v)", revNames(gotList), err1, revNames(wantList), err2)
			}

			rev, _ := upstreamhistory.NewControllerRevision(c.parent, revisionKind, map[string]string{"app": "db"}, runtime.RawExtension{Raw: []byte(c.data)}, 7, &c.count)
			oc, uc := c.count, c.count
			got, err1 := ours.CreateControllerRevision(ctx, c.parent, rev, &oc)
			want, err2 := theirs.CreateControllerRevision(c.parent, rev, &uc)
			if (err1 == nil) != (err2 == nil) || oc != uc || !reflect.DeepEqual(withoutManagedFields(got), withoutManagedFields(want)) {
				return fmt.Sprintf("CreateControllerRevision = %s count %d (%v), upstream %s count %d (%v)\n%s", revName(got), oc, err1, revName(want), uc, err2, cmp.Diff(want, got))
			}
			if err1 != nil {
				return ""
			}
			if oc > c.count {
				collided++
			}
			if got.UID != "" {
				reused++
			}
			if got, err1 = ours.UpdateControllerRevision(ctx, got, 9); err1 == nil {
				want, err2 = theirs.UpdateControllerRevision(want, 9)
				if err2 != nil || !reflect.DeepEqual(withoutManagedFields(got), withoutManagedFields(want)) {
					return fmt.Sprintf("UpdateControllerRevision = %+v, upstream %+v (%v)", got, want, err2)
				}
			} else {
				return fmt.Sprintf("UpdateControllerRevision: %v", err1)
			}

			for _, cr := range c.existing {
				g, e1 := ours.AdoptControllerRevision(ctx, c.parent, revisionKind, cr)
				w, e2 := theirs.AdoptControllerRevision(c.parent, revisionKind, cr)
				if (e1 == nil) != (e2 == nil) || !reflect.DeepEqual(withoutManagedFields(g), withoutManagedFields(w)) {
					return fmt.Sprintf("AdoptControllerRevision(%s) = %v (%v), upstream %v (%v)", cr.Name, revName(g), e1, revName(w), e2)
				}
				g, e1 = ours.ReleaseControllerRevision(ctx, c.parent, cr)
				w, e2 = theirs.ReleaseControllerRevision(c.parent, cr)
				if (e1 == nil) != (e2 == nil) || !reflect.DeepEqual(withoutManagedFields(g), withoutManagedFields(w)) {
					return fmt.Sprintf("ReleaseControllerRevision(%s) = %v (%v), upstream %v (%v)", cr.Name, revName(g), e1, revName(w), e2)
				}
				e1 = ours.DeleteControllerRevision(ctx, cr)
				e2 = theirs.DeleteControllerRevision(cr)
				if (e1 == nil) != (e2 == nil) {
					return fmt.Sprintf("DeleteControllerRevision(%s) = %v, upstream %v", cr.Name, e1, e2)
				}
			}
			if msg := sameWrites(ow.client.Actions(), uw.client.Actions()); msg != "" {
				return msg
			}
			return ""
		},
		shrink: func(c historyCase) []historyCase {
			var out []historyCase
			for _, ex := range removeEach(c.existing) {
				d := c
				d.existing = ex
				out = append(out, d)
			}
			return out
		},
		describe: func(c historyCase) string {
			var b strings.Builder
			fmt.Fprintf(&b, "create data=%s count=%d indexed=%v\n", c.data, c.count, c.indexed)
			for _, cr := range c.existing {
				fmt.Fprintf(&b, "existing %s raw=%s labels=%v owners=%d\n", cr.Name, cr.Data.Raw, cr.Labels, len(cr.OwnerReferences))
			}
			return b.String()
		},
	}.run(t)
	t.Logf("History: %d cases went through name collisions, %d returned an existing revision with equal data", collided, reused)
	if collided == 0 || reused == 0 {
		t.Errorf("the generator no longer reaches collisions (%d) or equal-data reuse (%d)", collided, reused)
	}
}

// sameWrites compares the requests both implementations sent: verbs,
// names, and patch bodies byte for byte.
func sameWrites(ours, theirs []k8stesting.Action) string {
	describe := func(as []k8stesting.Action) []string {
		var out []string
		for _, a := range as {
			s := a.GetVerb() + " " + a.GetNamespace()
			switch a := a.(type) {
			case k8stesting.PatchAction:
				s += " " + a.GetName() + " " + string(a.GetPatchType()) + " " + string(a.GetPatch())
			case k8stesting.GetAction: // deletes too: a DeleteAction is a GetAction
				s += " " + a.GetName()
			case k8stesting.CreateAction: // updates too: an UpdateAction is a CreateAction
				s += " " + a.GetObject().(metav1.Object).GetName()
			}
			out = append(out, s)
		}
		return out
	}
	o, u := describe(ours), describe(theirs)
	if !slices.Equal(o, u) {
		return fmt.Sprintf("requests differ:\nctrlkit:  %q\nupstream: %q", o, u)
	}
	return ""
}

// withoutManagedFields drops the fake clientset's managed-fields entries,
// which carry the wall-clock time of the write.
func withoutManagedFields(cr *appsv1.ControllerRevision) *appsv1.ControllerRevision {
	if cr == nil {
		return nil
	}
	cr = cr.DeepCopy()
	cr.ManagedFields = nil
	return cr
}

func sortByName(rs []*appsv1.ControllerRevision) {
	slices.SortFunc(rs, func(a, b *appsv1.ControllerRevision) int { return strings.Compare(a.Name, b.Name) })
}

func revName(cr *appsv1.ControllerRevision) string {
	if cr == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s(rev %d, owners %d)", cr.Name, cr.Revision, len(cr.OwnerReferences))
}

func revNames(rs []*appsv1.ControllerRevision) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = revName(r)
	}
	return out
}

func ptrString(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
