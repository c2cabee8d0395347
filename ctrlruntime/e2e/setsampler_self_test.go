package e2e

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/childset"
)

// The set sampler must catch an over-creation and an index held twice,
// whatever order the watches delivered their events in, and must follow
// the owner's replicas across a scale-down.
func TestSetSamplerCatchesViolations(t *testing.T) {
	const uid = types.UID("gang-uid")
	owner := func(rv int, replicas int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "Gang", "spec": map[string]any{"replicas": replicas}}}
		u.SetName("g")
		u.SetUID(uid)
		u.SetResourceVersion(strconv.Itoa(rv))
		return u
	}
	child := func(name, index string, rv int, owned bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "Pod"}}
		u.SetName(name)
		u.SetResourceVersion(strconv.Itoa(rv))
		u.SetLabels(map[string]string{childset.IndexLabel: index})
		if owned {
			u.SetOwnerReferences([]metav1.OwnerReference{{UID: uid, Controller: new(true), Name: "g", Kind: "Gang"}})
		}
		return u
	}
	s := &setSampler{ownerKind: "Gang"}
	h := s.handler()
	h.OnAdd(child("g-0", "0", 2, true), false) // ahead of its owner
	h.OnAdd(owner(1, 2), false)
	h.OnAdd(child("g-1", "1", 3, true), false)
	h.OnUpdate(nil, owner(4, 1))             // scale down: two live, no violation
	h.OnDelete(child("g-1", "1", 5, true))   // the deletion lands
	h.OnAdd(child("x", "0", 6, true), false) // index 0 held twice, and 2 > 1
	h.OnAdd(child("o", "", 7, false), false) // an orphan counts for no one
	h.OnUpdate(nil, child("o", "", 8, true)) // adopted: a raise, 3 > 1
	rep := s.replay()
	assert.Equal(t, 4, rep.Samples)
	assert.Equal(t, 2, rep.MaxExcess)
	assert.Len(t, rep.Violations, 3, "%v", rep.Violations)
	assert.Equal(t, map[string]bool{"g-0": true, "g-1": true, "x": true, "o": true}, rep.Controlled)
}
