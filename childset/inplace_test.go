package childset_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/history"
)

// inPlaceSpec is rolloutSpec whose children also record the owner
// template's "shape", which cannot change in place, and whose owners choose
// their update strategy.
type inPlaceSpec struct {
	*rolloutSpec
	strategy childset.UpdateStrategy
}

func (inPlaceSpec) NewChild(rs *appsv1.ReplicaSet) (*v1.ConfigMap, error) {
	cm := rolloutTemplate(rs)
	cm.Data["shape"] = rs.Spec.Template.Annotations["shape"]
	return cm, nil
}

func (s inPlaceSpec) UpdateStrategy(*appsv1.ReplicaSet) childset.UpdateStrategy { return s.strategy }

// inPlaceKind updates a ConfigMap's version in place: the patch sets the
// data and makes the child unready, as a container restarting on a new
// image does, until the harness makes it ready again.
type inPlaceKind struct{ readySinceKind }

func (inPlaceKind) InPlaceUpdate(from, to *v1.ConfigMap) ([]childset.InPlacePatch, bool) {
	if from.Data["shape"] != to.Data["shape"] {
		return nil, false
	}
	data, err := json.Marshal(map[string]any{
		"data":     map[string]string{"version": to.Data["version"]},
		"metadata": map[string]any{"annotations": map[string]any{"ready": "false", "ready-since": nil}},
	})
	if err != nil {
		return nil, false
	}
	return []childset.InPlacePatch{{Type: types.MergePatchType, Data: data}}, true
}

func (inPlaceKind) InPlaceDone(*v1.ConfigMap) bool { return true }

var (
	_ childset.UpdateStrategySpec[*appsv1.ReplicaSet] = inPlaceSpec{}
	_ childset.InPlaceKind[*v1.ConfigMap]             = inPlaceKind{}
)

func newInPlaceEnv(t *testing.T, replicas int32, update childset.RollingUpdate, strategy childset.UpdateStrategy) *rollEnv {
	t.Helper()
	e := newRollEnv(t, replicas, update)
	informer := informers.NewSharedInformerFactory(fake.NewClientset(), 0).Apps().V1().ControllerRevisions()
	e.revisions = informer.Informer().GetIndexer()
	e.history = &refusingHistory{Interface: history.NewFakeHistory(informer)}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](inPlaceSpec{e.spec, strategy},
		inPlaceKind{readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}}}, configMapControl(e.client, nil),
		childset.WithEventRecorder(e.recorder), childset.WithClock(e.clock), childset.WithRevisions(e.history))
	e.owner.Spec.Template.Annotations["shape"] = "round"
	return e
}

// setShape changes the part of the template that cannot change in place.
func (e *rollEnv) setShape(shape string) {
	e.t.Helper()
	e.owner = e.owner.DeepCopy()
	e.owner.Generation++
	e.owner.Spec.Template.Annotations["shape"] = shape
	require.NoError(e.t, e.owners.Update(e.owner))
}

// uids is the API's children by name, with their UIDs.
func (e *rollEnv) uids() map[string]types.UID {
	out := map[string]types.UID{}
	for _, cm := range e.apiChildren() {
		out[cm.Name] = cm.UID
	}
	return out
}

// An in-place rollout updates every child where it stands: no child is
// created or deleted, each ends at the update revision, and no more than
// maxUnavailable are ever unavailable, a cache that lags included.
func TestInPlaceRolloutKeepsEveryChild(t *testing.T) {
	for _, strategy := range []childset.UpdateStrategy{childset.InPlaceIfPossible, childset.InPlaceOnly} {
		t.Run(string(strategy), func(t *testing.T) {
			e := newInPlaceEnv(t, 10, childset.RollingUpdate{MaxSurge: num(0), MaxUnavailable: num(2)}, strategy)
			e.settle()
			before := e.uids()
			writes := len(e.writes())

			e.rollTo("v2", 0, 2)
			assert.Equal(t, before, e.uids(), "every child kept its UID")
			for _, w := range e.writes()[writes:] {
				assert.True(t, strings.HasPrefix(w, "patch "), "only patches: %s", w)
			}
			// Each child is patched once by the Kind and once for its label,
			// though every sync is repeated on a cache that has not seen
			// the patches yet: a child updated in place is not updated
			// again.
			assert.Len(t, e.writes()[writes:], 20)
			st := e.spec.last()
			assert.Equal(t, map[string]int{revisionHashOf(st.UpdateRevision): 10}, e.hashes())
			for _, cm := range e.apiChildren() {
				assert.Equal(t, "v2", cm.Data["version"], cm.Name)
			}

			// A rollback is a rollout in place too.
			e.rollTo("v1", 0, 2)
			assert.Equal(t, before, e.uids())
			for _, cm := range e.apiChildren() {
				assert.Equal(t, "v1", cm.Data["version"], cm.Name)
			}
		})
	}
}

// A change that cannot be made in place recreates the children under
// InPlaceIfPossible, and leaves them at their revision under InPlaceOnly,
// with a Warning event.
func TestInPlaceImpossibleChange(t *testing.T) {
	t.Run("InPlaceIfPossible recreates", func(t *testing.T) {
		e := newInPlaceEnv(t, 4, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)}, childset.InPlaceIfPossible)
		e.settle()
		before := e.uids()
		e.setShape("square")
		e.rollToCurrent(1, 0)
		for name := range before {
			assert.NotContains(t, e.uids(), name, "replaced")
		}
		for _, cm := range e.apiChildren() {
			assert.Equal(t, "square", cm.Data["shape"])
		}
	})
	t.Run("InPlaceOnly refuses", func(t *testing.T) {
		e := newInPlaceEnv(t, 4, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(1)}, childset.InPlaceOnly)
		e.settle()
		before := e.uids()
		writes := len(e.writes())
		e.events()
		e.setShape("square")
		for range 3 {
			e.reconcile("web")
			e.catchUp()
		}
		assert.Equal(t, before, e.uids(), "no child replaced")
		assert.Empty(t, e.writes()[writes:], "nothing written to the children")
		assert.True(t, slices.ContainsFunc(e.events(), func(ev string) bool {
			return strings.HasPrefix(ev, "Warning "+childset.ReasonInPlaceUpdateRefused+" ")
		}), "a Warning says why")
		for _, cm := range e.apiChildren() {
			assert.Equal(t, "round", cm.Data["shape"])
		}
	})
}

// rollToCurrent drives the rollout the owner asks for now to its end,
// checking the bounds.
func (e *rollEnv) rollToCurrent(surge, unavailable int) {
	e.t.Helper()
	replicas := int(*e.owner.Spec.Replicas)
	e.steps(func(step int) {
		if total := len(e.apiChildren()); total > replicas+surge {
			e.t.Fatalf("step %d: %d children, more than %d + maxSurge %d", step, total, replicas, surge)
		}
		if avail := e.available(); avail < replicas-unavailable {
			e.t.Fatalf("step %d: %d available, fewer than %d - maxUnavailable %d", step, avail, replicas, unavailable)
		}
	})
}

// An update the API server refuses (a pod on a node that cannot resize)
// is not sent again: InPlaceIfPossible recreates the child instead, with a
// Warning, and the rollout ends.
func TestInPlaceRefusedByTheServerRecreates(t *testing.T) {
	e := newInPlaceEnv(t, 4, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)}, childset.InPlaceIfPossible)
	e.settle()
	before := e.uids()
	e.client.PrependReactor("patch", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if strings.Contains(string(a.(k8stesting.PatchAction).GetPatch()), `"version"`) {
			return true, nil, apierrors.NewForbidden(v1.Resource("configmaps"), a.(k8stesting.PatchAction).GetName(), errors.New("no"))
		}
		return false, nil, nil
	})
	e.events()
	e.setVersion("v2")
	e.rollToCurrent(1, 0)
	for name := range before {
		assert.NotContains(t, e.uids(), name, "recreated")
	}
	assert.True(t, slices.ContainsFunc(e.events(), func(ev string) bool {
		return strings.HasPrefix(ev, "Warning "+childset.ReasonInPlaceUpdateRefused+" ")
	}))
}

// With no child allowed to be unavailable, an in-place rollout surges a
// child first, then updates the old ones in place one at a time while the
// surge covers for them.
func TestInPlaceRolloutWithoutUnavailability(t *testing.T) {
	e := newInPlaceEnv(t, 6, childset.RollingUpdate{MaxSurge: num(1), MaxUnavailable: num(0)}, childset.InPlaceIfPossible)
	e.settle()
	before := e.uids()
	e.setVersion("v2")
	e.rollToCurrent(1, 0)
	kept := 0
	after := e.uids()
	for name, uid := range before {
		if after[name] == uid {
			kept++
		}
	}
	assert.Equal(t, 5, kept, "all but the one the surge child replaced are updated in place")
	for _, cm := range e.apiChildren() {
		assert.Equal(t, "v2", cm.Data["version"], cm.Name)
	}
}
