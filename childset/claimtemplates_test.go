package childset_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/expectations"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

var cmGVK = v1.SchemeGroupVersion.WithKind("ConfigMap")

const (
	retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	del    = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
)

// claimSpec is rsSpec whose owners give the claim templates ct points to,
// so a test can change them between syncs; mountingSpec also tells each
// ConfigMap its claims (ClaimMounter).
type claimSpec struct {
	rsSpec
	ct *childset.ClaimTemplates
}

func (s claimSpec) ClaimTemplates(*appsv1.ReplicaSet) childset.ClaimTemplates { return *s.ct }

type mountingSpec struct{ claimSpec }

func (mountingSpec) MountClaims(_ *appsv1.ReplicaSet, cm *v1.ConfigMap, claims map[string]string) {
	for tmpl, claim := range claims {
		cm.Data["claim-"+tmpl] = claim
	}
}

var (
	_ childset.ClaimTemplateSpec[*appsv1.ReplicaSet]           = claimSpec{}
	_ childset.ClaimMounter[*appsv1.ReplicaSet, *v1.ConfigMap] = mountingSpec{}
)

func dataTemplate(name string) v1.PersistentVolumeClaim {
	return v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "storage"}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

// claimEnv is env with claim templates: claims is the claim cache, filled
// by catchUpClaims.
type claimEnv struct {
	*env
	ct     *childset.ClaimTemplates
	claims cache.Indexer
}

func newClaimEnv(t *testing.T, ct childset.ClaimTemplates, mount bool, pt types.PatchType, opts ...childset.Option) *claimEnv {
	t.Helper()
	e := &claimEnv{env: newEnv(t), ct: &ct,
		claims: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	var spec childset.Spec[*appsv1.ReplicaSet, *v1.ConfigMap] = claimSpec{rsSpec{e.owners}, e.ct}
	if mount {
		spec = mountingSpec{claimSpec{rsSpec{e.owners}, e.ct}}
	}
	writer := objectcontrol.New("PersistentVolumeClaim", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.PersistentVolumeClaim] {
			return e.client.CoreV1().PersistentVolumeClaims(ns)
		}), nil, pt)
	e.r = childset.NewReconciler(spec, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}, configMapControl(e.client, nil),
		append([]childset.Option{childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock),
			childset.WithClaims(writer, childset.IndexerLister[*v1.PersistentVolumeClaim](e.claims), cmGVK)}, opts...)...)
	return e
}

// catchUpClaims delivers the API's claims to the claim cache.
func (e *claimEnv) catchUpClaims() {
	e.t.Helper()
	list, err := e.client.CoreV1().PersistentVolumeClaims(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	objs := make([]any, len(list.Items))
	for i := range list.Items {
		objs[i] = &list.Items[i]
	}
	if err := e.claims.Replace(objs, ""); err != nil {
		e.t.Fatal(err)
	}
}

func (e *claimEnv) claim(name string) *v1.PersistentVolumeClaim {
	e.t.Helper()
	pvc, err := e.client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("claim %s: %v", name, err)
	}
	return pvc
}

func (e *claimEnv) claimNames() []string {
	e.t.Helper()
	list, err := e.client.CoreV1().PersistentVolumeClaims(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, pvc := range list.Items {
		out = append(out, pvc.Name)
	}
	slices.Sort(out)
	return out
}

// allWrites lists the writes of claims and children in order, as "verb
// resource name".
func (e *claimEnv) allWrites() []string {
	var out []string
	for _, a := range e.client.Actions() {
		var name string
		switch a.GetVerb() {
		case "create":
			name = a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName()
		case "patch":
			name = a.(k8stesting.PatchAction).GetName()
		case "delete":
			name = a.(k8stesting.DeleteAction).GetName()
		default:
			continue
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource+" "+name)
	}
	return out
}

// refsOf describes claim's owner references as "Kind/name", with
// "(controller)" for a controller reference.
func refsOf(pvc *v1.PersistentVolumeClaim) []string {
	var out []string
	for _, ref := range pvc.OwnerReferences {
		s := ref.Kind + "/" + ref.Name
		if ref.Controller != nil && *ref.Controller {
			s += "(controller)"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Each index's claims are created before its child, named after the
// template and the child, labelled as the template and the child are; a
// claim cache that lags does not create them twice.
func TestClaimsCreatedBeforeTheirChild(t *testing.T) {
	e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data"), dataTemplate("logs")}},
		false, types.StrategicMergePatchType, childset.WithIndexedNames(nil))
	e.addOwner(newOwner("web", 2))
	e.reconcile("web")
	writes := e.allWrites()
	for _, i := range []string{"0", "1"} {
		child := slices.Index(writes, "create configmaps web-"+i)
		for _, tmpl := range []string{"data", "logs"} {
			claim := slices.Index(writes, "create persistentvolumeclaims "+tmpl+"-web-"+i)
			if claim < 0 || child < 0 || claim > child {
				t.Fatalf("writes %v: want claim %s-web-%s created before its child", writes, tmpl, i)
			}
		}
	}
	pvc := e.claim("data-web-1")
	if pvc.Labels["tier"] != "storage" || pvc.Labels["app"] != "web" || pvc.Labels[childset.IndexLabel] != "1" {
		t.Fatalf("claim labels %v, want the template's, the child's and its index", pvc.Labels)
	}
	if len(pvc.OwnerReferences) != 0 {
		t.Fatalf("Retain/Retain claim refers to %v, want no owner", refsOf(pvc))
	}
	if pvc.Spec.Resources.Requests.Storage().String() != "1Gi" {
		t.Fatalf("claim spec %v, want the template's", pvc.Spec)
	}

	// The children's cache caught up, the claims' did not: nothing is
	// created again.
	e.catchUp()
	e.client.ClearActions()
	e.reconcile("web")
	if got := e.allWrites(); len(got) != 0 {
		t.Fatalf("steady sync with a lagging claim cache wrote %v", got)
	}
	if got := e.claimNames(); !slices.Equal(got, []string{"data-web-0", "data-web-1", "logs-web-0", "logs-web-1"}) {
		t.Fatalf("claims %v", got)
	}
}

// A child whose claim could not be shown to be its own is not created, nor
// expected: the owner is not held back by a child that was never sent.
func TestClaimNotInCacheYetHoldsOnlyItsChild(t *testing.T) {
	e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")}},
		false, types.StrategicMergePatchType, childset.WithIndexedNames(nil))
	owner := newOwner("web", 2)
	e.addOwner(owner)
	// data-web-1 exists in the API, but the claim cache does not show it:
	// its create is refused as already existing.
	if err := e.cluster.Add(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-web-1"}}); err != nil {
		t.Fatal(err)
	}
	res := e.reconcile("web")
	if got := e.apiNames(); !slices.Equal(got, []string{"web-0"}) {
		t.Fatalf("children %v, want web-0 alone", got)
	}
	if res.RequeueAfter != childset.DefaultNameConflictRetry {
		t.Fatalf("RequeueAfter %v, want a retry", res.RequeueAfter)
	}
	e.catchUp()
	if !e.r.Expectations().SatisfiedExpectations(expectations.OwnerKeyFor(owner)) {
		t.Fatal("the child of a claim not created is still expected")
	}
	// Once the cache shows the claim, unowned as Retain leaves it, it is
	// used.
	e.catchUpClaims()
	e.reconcile("web")
	if got := e.apiNames(); !slices.Equal(got, []string{"web-0", "web-1"}) {
		t.Fatalf("children %v, want web-1 created on its existing claim", got)
	}
}

// WhenDeleted Delete makes the claims refer to the owner, not as its
// controller; a change to Retain removes the reference, and back.
func TestClaimRetentionWhenDeleted(t *testing.T) {
	for _, pt := range []types.PatchType{types.StrategicMergePatchType, types.MergePatchType} {
		t.Run(string(pt), func(t *testing.T) {
			e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")},
				Retention: appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: del}},
				false, pt, childset.WithIndexedNames(nil))
			e.addOwner(newOwner("web", 1))
			e.reconcile("web")
			e.catchUp()
			e.catchUpClaims()
			if got := refsOf(e.claim("data-web-0")); !slices.Equal(got, []string{"ReplicaSet/web"}) {
				t.Fatalf("claim refers to %v, want the owner alone, no controller", got)
			}
			// A foreign owner reference on the claim is kept through.
			pvc := e.claim("data-web-0")
			pvc.OwnerReferences = append(pvc.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "keep", UID: "keep-uid"})
			if _, err := e.client.CoreV1().PersistentVolumeClaims(ns).Update(context.Background(), pvc, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			e.catchUpClaims()

			e.ct.Retention.WhenDeleted = retain
			e.reconcile("web")
			e.catchUpClaims()
			if got := refsOf(e.claim("data-web-0")); !slices.Equal(got, []string{"Secret/keep"}) {
				t.Fatalf("after Retain: claim refers to %v, want the foreign reference alone", got)
			}
			e.client.ClearActions()
			e.reconcile("web")
			if got := e.allWrites(); len(got) != 0 {
				t.Fatalf("a claim matching the policy was written: %v", got)
			}

			e.ct.Retention.WhenDeleted = del
			e.reconcile("web")
			e.catchUpClaims()
			if got := refsOf(e.claim("data-web-0")); !slices.Equal(got, []string{"ReplicaSet/web", "Secret/keep"}) {
				t.Fatalf("back to Delete: claim refers to %v", got)
			}
		})
	}
}

// WhenScaled Delete hands a scaled-down child's claims over to it before
// it is deleted; the claims of the children that stay keep the owner. A
// claim left to the garbage collector holds its index back until it is
// gone.
func TestClaimRetentionWhenScaled(t *testing.T) {
	for _, whenScaled := range []appsv1.PersistentVolumeClaimRetentionPolicyType{del, retain} {
		t.Run(string(whenScaled), func(t *testing.T) {
			e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")},
				Retention: appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: del, WhenScaled: whenScaled}},
				false, types.StrategicMergePatchType, childset.WithIndexedNames(nil))
			owner := newOwner("web", 3)
			e.addOwner(owner)
			e.reconcile("web")
			e.catchUp()
			e.catchUpClaims()

			obj, _, _ := e.children.GetByKey(ns + "/web-2")
			web2 := obj.(*v1.ConfigMap)
			*owner.Spec.Replicas = 2
			e.addOwner(owner)
			e.client.ClearActions()
			e.reconcile("web")
			writes := e.allWrites()
			del2 := slices.Index(writes, "delete configmaps web-2")
			if del2 < 0 {
				t.Fatalf("writes %v: web-2 not deleted", writes)
			}
			pvc := e.claim("data-web-2")
			if whenScaled == retain {
				if got := refsOf(pvc); !slices.Equal(got, []string{"ReplicaSet/web"}) {
					t.Fatalf("scaled-down claim refers to %v, want the owner alone", got)
				}
				return
			}
			if got := refsOf(pvc); !slices.Equal(got, []string{"ConfigMap/web-2"}) || pvc.OwnerReferences[0].UID != web2.UID {
				t.Fatalf("scaled-down claim refers to %v, want its child alone", got)
			}
			if patch := slices.Index(writes, "patch persistentvolumeclaims data-web-2"); patch < 0 || patch > del2 {
				t.Fatalf("writes %v: the claim must refer to its child before the child goes", writes)
			}
			if got := refsOf(e.claim("data-web-1")); !slices.Equal(got, []string{"ReplicaSet/web"}) {
				t.Fatalf("staying claim refers to %v", got)
			}
			e.catchUp()
			e.catchUpClaims()

			// Scaled up again before the collector deleted the claim: the
			// claim is web-2's old child's, so web-2 waits.
			*owner.Spec.Replicas = 3
			e.addOwner(owner)
			e.client.ClearActions()
			res := e.reconcile("web")
			if got := e.allWrites(); len(got) != 0 {
				t.Fatalf("wrote %v while the old claim is left to the collector", got)
			}
			if res.RequeueAfter <= 0 {
				t.Fatal("no retry while waiting for the collector")
			}
			// The collector deletes it: web-2 gets a fresh claim.
			if err := e.client.CoreV1().PersistentVolumeClaims(ns).Delete(context.Background(), "data-web-2", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			e.catchUpClaims()
			e.reconcile("web")
			if got := refsOf(e.claim("data-web-2")); !slices.Equal(got, []string{"ReplicaSet/web"}) {
				t.Fatalf("new claim refers to %v", got)
			}
			if got := e.apiNames(); !slices.Equal(got, names("web", 0, 1, 2)) {
				t.Fatalf("children %v", got)
			}
		})
	}
}

// A scaled-down child whose claim could not be handed over is not deleted:
// its claim would be left to the owner alone.
func TestClaimHandOverFailureKeepsTheChild(t *testing.T) {
	e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")},
		Retention: appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenScaled: del}},
		false, types.StrategicMergePatchType, childset.WithIndexedNames(nil))
	owner := newOwner("web", 2)
	e.addOwner(owner)
	e.reconcile("web")
	e.catchUp()
	e.catchUpClaims()
	e.client.PrependReactor("patch", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("boom"))
	})
	*owner.Spec.Replicas = 1
	e.addOwner(owner)
	if _, err := e.r.Reconcile(context.Background(), ns+"/web"); err == nil {
		t.Fatal("no error for a claim that could not be handed over")
	}
	if got := countPrefix(e.writes(), "delete "); got != 0 {
		t.Fatalf("%d children deleted with their claims not handed over", got)
	}
}

// A claim controlled by another object is never taken over: its child is
// not created, with a Warning event and a retry; the other indices go on.
func TestClaimOfAnotherObject(t *testing.T) {
	yes := true
	for name, refs := range map[string][]metav1.OwnerReference{
		"controlled":        {{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "db-uid", Controller: &yes}},
		"another owner":     {{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other", UID: "other-uid"}},
		"an earlier owner":  {{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "old-uid"}},
		"being deleted":     nil,
		"unrelated, usable": {{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "s-uid"}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data"), dataTemplate("logs")},
				Retention: appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: del}},
				false, types.StrategicMergePatchType, childset.WithIndexedNames(nil))
			e.addOwner(newOwner("web", 2))
			held := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-web-0", OwnerReferences: refs}}
			if name == "being deleted" {
				now := metav1.Now()
				held.DeletionTimestamp, held.Finalizers = &now, []string{"kubernetes.io/pvc-protection"}
			}
			if err := e.cluster.Add(held); err != nil {
				t.Fatal(err)
			}
			e.catchUpClaims()
			res := e.reconcile("web")
			if name == "unrelated, usable" {
				if got := e.apiNames(); !slices.Equal(got, names("web", 0, 1)) {
					t.Fatalf("children %v", got)
				}
				return
			}
			if got := e.apiNames(); !slices.Equal(got, []string{"web-1"}) {
				t.Fatalf("children %v, want web-1 alone", got)
			}
			// web-0's other claim waits with it.
			if got := e.claimNames(); !slices.Equal(got, []string{"data-web-0", "data-web-1", "logs-web-1"}) {
				t.Fatalf("claims %v", got)
			}
			if res.RequeueAfter != childset.DefaultNameConflictRetry {
				t.Fatalf("RequeueAfter %v, want a retry", res.RequeueAfter)
			}
			if got := countPrefix(e.allWrites(), "patch persistentvolumeclaims data-web-0"); got != 0 {
				t.Fatal("the held claim was patched")
			}
			conflict := slices.ContainsFunc(e.events(), func(ev string) bool {
				return strings.HasPrefix(ev, "Warning "+childset.ReasonClaimConflict+" ")
			})
			if want := name == "controlled" || name == "another owner"; conflict != want {
				t.Fatalf("conflict event %v, want %v", conflict, want)
			}
		})
	}
}

// Malformed templates refuse the owner, with an event, and write nothing;
// a claim name that cannot be holds back its child alone, without a retry.
func TestClaimTemplatesBadData(t *testing.T) {
	for name, tc := range map[string]struct {
		ct      childset.ClaimTemplates
		indexed bool
	}{
		"bad template name": {ct: childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("Data_1")}}, indexed: true},
		"no template name":  {ct: childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("")}}, indexed: true},
		"twice":             {ct: childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("d"), dataTemplate("d")}}, indexed: true},
		"bad policy": {ct: childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("d")},
			Retention: appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenScaled: "Sometimes"}}, indexed: true},
		"interchangeable": {ct: childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("d")}}},
	} {
		t.Run(name, func(t *testing.T) {
			var opts []childset.Option
			if tc.indexed {
				opts = append(opts, childset.WithIndexedNames(nil))
			}
			e := newClaimEnv(t, tc.ct, false, types.StrategicMergePatchType, opts...)
			e.addOwner(newOwner("web", 2))
			res := e.reconcile("web")
			if got := e.allWrites(); len(got) != 0 || res.RequeueAfter != 0 {
				t.Fatalf("refused owner wrote %v, RequeueAfter %v", got, res.RequeueAfter)
			}
			if !slices.ContainsFunc(e.events(), func(ev string) bool {
				return strings.HasPrefix(ev, "Warning "+childset.ReasonClaimTemplateInvalid+" ")
			}) {
				t.Fatal("no Warning event for the templates")
			}
		})
	}

	t.Run("claim refused by the API server", func(t *testing.T) {
		e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")}},
			false, types.StrategicMergePatchType, childset.WithIndexedNames(nil))
		e.client.PrependReactor("create", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewInvalid(v1.SchemeGroupVersion.WithKind("PersistentVolumeClaim").GroupKind(), "data-web-0", nil)
		})
		e.addOwner(newOwner("web", 1))
		res := e.reconcile("web")
		if got := e.apiNames(); len(got) != 0 || res.RequeueAfter != 0 {
			t.Fatalf("children %v, RequeueAfter %v: want none, and no retry", got, res.RequeueAfter)
		}
		if !slices.ContainsFunc(e.events(), func(ev string) bool {
			return strings.HasPrefix(ev, "Warning "+childset.ReasonClaimTemplateInvalid+" ")
		}) {
			t.Fatal("no Warning event for the refused claim")
		}
	})

	t.Run("claim name too long", func(t *testing.T) {
		e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate(strings.Repeat("d", 63))}},
			false, types.StrategicMergePatchType, childset.WithIndexedNames(func(owner string, i int) string {
				if i == 1 {
					return strings.Repeat("w", 200)
				}
				return childset.DefaultName(owner, i)
			}))
		e.addOwner(newOwner("web", 2))
		res := e.reconcile("web")
		if got := e.apiNames(); !slices.Equal(got, []string{"web-0"}) {
			t.Fatalf("children %v, want web-0 alone", got)
		}
		if got := e.claimNames(); len(got) != 1 {
			t.Fatalf("claims %v, want web-0's alone", got)
		}
		if res.RequeueAfter != 0 {
			t.Fatalf("RequeueAfter %v: retrying cannot shorten a name", res.RequeueAfter)
		}
		if !slices.ContainsFunc(e.events(), func(ev string) bool {
			return strings.HasPrefix(ev, "Warning "+childset.ReasonClaimNameInvalid+" ")
		}) {
			t.Fatal("no Warning event for the claim name")
		}
	})
}

// A Spec that mounts claims itself is told each child's claim names.
func TestClaimMounter(t *testing.T) {
	e := newClaimEnv(t, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")}},
		true, types.StrategicMergePatchType, childset.WithIndexedNames(nil))
	e.addOwner(newOwner("web", 2))
	e.reconcile("web")
	for _, cm := range e.apiChildren() {
		if got, want := cm.Data["claim-data"], childset.ClaimName("data", cm.Name); got != want {
			t.Fatalf("%s mounts %q, want %q", cm.Name, got, want)
		}
	}
}

// blockingClaims is a claim writer whose creates ignore their context and
// answer only once the test releases them.
type blockingClaims struct {
	objectcontrol.Interface[*v1.PersistentVolumeClaim]
	release <-chan struct{}
}

func (w blockingClaims) Create(context.Context, string, *v1.PersistentVolumeClaim, runtime.Object, *metav1.OwnerReference) (*v1.PersistentVolumeClaim, error) {
	<-w.release
	return nil, errors.New("released")
}

// A claim create is bounded by the write timeout, as every write is, and
// its child waits for it.
func TestClaimCreateDeadline(t *testing.T) {
	e := newEnv(t)
	ct := childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")}}
	claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	release := make(chan struct{})
	defer close(release)
	e.r = childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](claimSpec{rsSpec{e.owners}, &ct},
		cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}, configMapControl(e.client, nil),
		childset.WithIndexedNames(nil), childset.WithWriteTimeout(50*time.Millisecond),
		childset.WithClaims(blockingClaims{release: release}, childset.IndexerLister[*v1.PersistentVolumeClaim](claims), cmGVK))
	e.addOwner(newOwner("web", 1))
	errc := make(chan error, 1)
	go func() {
		_, err := e.r.Reconcile(context.Background(), ns+"/web")
		errc <- err
	}()
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("Reconcile still blocked long after the write deadline")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Reconcile: %v, want the write deadline", err)
	}
	if got := e.apiNames(); len(got) != 0 {
		t.Fatalf("children %v created without their claims", got)
	}
}

// NewReconciler refuses a Spec with claim templates and no WithClaims, and
// the reverse.
func TestClaimsNeedBoth(t *testing.T) {
	e := newEnv(t)
	ct := childset.ClaimTemplates{}
	mustPanic(t, "ClaimTemplateSpec needs WithClaims", func() {
		childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](claimSpec{rsSpec{e.owners}, &ct},
			cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}, configMapControl(e.client, nil))
	})
	claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	writer := &objectcontrol.Fake[*v1.PersistentVolumeClaim]{}
	mustPanic(t, "ClaimTemplateSpec needs WithClaims", func() {
		childset.NewReconciler[*appsv1.ReplicaSet, *v1.ConfigMap](rsSpec{e.owners},
			cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}, configMapControl(e.client, nil),
			childset.WithClaims(writer, childset.IndexerLister[*v1.PersistentVolumeClaim](claims), cmGVK))
	})
}

// liveClaims reads claims from the API, a cache that never lags.
type liveClaims struct{ e *env }

func (l liveClaims) Get(namespace, name string) (*v1.PersistentVolumeClaim, bool, error) {
	pvc, err := l.e.client.CoreV1().PersistentVolumeClaims(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	return pvc, err == nil, err
}

// rollClaimSpec is rolloutSpec with claim templates.
type rollClaimSpec struct {
	*rolloutSpec
	ct childset.ClaimTemplates
}

func (s rollClaimSpec) ClaimTemplates(*appsv1.ReplicaSet) childset.ClaimTemplates { return s.ct }

// An indexed rollout replaces each child on the claims it had: none is
// created again or handed over, and none carries a revision.
func TestClaimsKeptThroughAnIndexedRollout(t *testing.T) {
	e := newRollEnv(t, 3, childset.RollingUpdate{MaxSurge: num(0), MaxUnavailable: num(1)})
	spec := rollClaimSpec{e.spec, childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")},
		Retention: appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: del, WhenScaled: del}}}
	writer := objectcontrol.New("PersistentVolumeClaim", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.PersistentVolumeClaim] {
			return e.client.CoreV1().PersistentVolumeClaims(ns)
		}), nil, types.StrategicMergePatchType)
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](spec,
		readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}}, configMapControl(e.client, nil),
		childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock), childset.WithRevisions(e.history),
		childset.WithIndexedNames(nil), childset.WithClaims(writer, liveClaims{e.env}, cmGVK))
	e.settle()
	uids := map[string]types.UID{}
	for _, name := range names("data-web", 0, 1, 2) {
		uids[name] = (&claimEnv{env: e.env}).claim(name).UID
	}
	e.client.ClearActions()
	e.setVersion("v2")
	e.settle()
	if got := e.hashes(); len(got) != 1 {
		t.Fatalf("revisions %v after the rollout, want one", got)
	}
	if got := countPrefix(e.writes(), "delete "); got != 3 {
		t.Fatalf("%d children replaced, want 3", got)
	}
	for _, w := range (&claimEnv{env: e.env}).allWrites() {
		if strings.Contains(w, "persistentvolumeclaims") {
			t.Fatalf("the rollout wrote claims: %s", w)
		}
	}
	for name, uid := range uids {
		pvc := (&claimEnv{env: e.env}).claim(name)
		if pvc.UID != uid {
			t.Fatalf("%s was created again", name)
		}
		if got := refsOf(pvc); !slices.Equal(got, []string{"ReplicaSet/web"}) {
			t.Fatalf("%s refers to %v, want the owner alone", name, got)
		}
		if _, ok := pvc.Labels[history.ControllerRevisionHashLabel]; ok {
			t.Fatalf("%s carries a revision: %v", name, pvc.Labels)
		}
	}
}

// Run waits for the claim cache WithClaims names, as for the owner and
// child informers: until it is synced the controller writes nothing.
func TestControllerWaitsForTheClaimCache(t *testing.T) {
	cluster := simcluster.New()
	client := cluster.Client()
	e := &env{t: t, cluster: cluster, client: client}
	factory := informers.NewSharedInformerFactory(client, 0)
	// The claims come from a factory of their own, started later.
	claimFactory := informers.NewSharedInformerFactory(client, 0)
	claims := claimFactory.Core().V1().PersistentVolumeClaims().Informer()
	rsInformer := factory.Apps().V1().ReplicaSets().Informer()
	cmInformer := factory.Core().V1().ConfigMaps().Informer()
	ct := childset.ClaimTemplates{Templates: []v1.PersistentVolumeClaim{dataTemplate("data")}}
	writer := objectcontrol.New("PersistentVolumeClaim", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.PersistentVolumeClaim] {
			return client.CoreV1().PersistentVolumeClaims(ns)
		}),
		nil, types.StrategicMergePatchType)
	ctrl, err := childset.New(rsInformer, cmInformer, claimSpec{rsSpec{rsInformer.GetIndexer()}, &ct},
		alwaysReady{childset.IndexerLister[*v1.ConfigMap](cmInformer.GetIndexer())}, configMapControl(client, nil),
		childset.WithIndexedNames(nil),
		childset.WithClaims(writer, childset.IndexerLister[*v1.PersistentVolumeClaim](claims.GetIndexer()), cmGVK, claims.HasSynced))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	owner := newOwner("web", 2)
	owner.UID = ""
	if _, err := client.AppsV1().ReplicaSets(ns).Create(ctx, owner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	defer func() {
		cancel()
		factory.Shutdown()
		claimFactory.Shutdown()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	if !cache.WaitForCacheSync(ctx.Done(), rsInformer.HasSynced, cmInformer.HasSynced) {
		t.Fatal("informers not synced")
	}
	time.Sleep(300 * time.Millisecond)
	if ctrl.HasSynced() {
		t.Fatal("ready before the claim cache synced")
	}
	if got := e.apiChildren(); len(got) != 0 {
		t.Fatalf("children %v written before the claim cache synced", got)
	}

	claimFactory.Start(ctx.Done())
	deadline := time.Now().Add(10 * time.Second)
	for len(e.apiChildren()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("children %v after the claim cache synced, want 2", e.apiNames())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := (&claimEnv{env: e}).claimNames(); !slices.Equal(got, names("data-web", 0, 1)) {
		t.Fatalf("claims %v", got)
	}
}
