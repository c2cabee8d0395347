package history

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

var setKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

func parentSet(name string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}}
}

func rawData(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

func TestNewControllerRevision(t *testing.T) {
	labels := map[string]string{"app": "db"}
	cr, err := NewControllerRevision(parentSet("db"), setKind, labels, rawData(`{"a":1}`), 7, ptr[int32](2))
	require.NoError(t, err)
	hash := HashControllerRevision(&appsv1.ControllerRevision{Data: rawData(`{"a":1}`)}, ptr[int32](2))
	assert.Equal(t, "db-"+hash, cr.Name)
	assert.Equal(t, map[string]string{"app": "db", ControllerRevisionHashLabel: hash}, cr.Labels)
	assert.Equal(t, map[string]string{"app": "db"}, labels, "the template labels are copied, not changed")
	assert.Equal(t, int64(7), cr.Revision)
	assert.Empty(t, cr.Namespace)
	ref := metav1.GetControllerOf(cr)
	require.NotNil(t, ref)
	assert.Equal(t, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "uid-db",
		Controller: ptr(true), BlockOwnerDeletion: ptr(true)}, *ref)

	cr, err = NewControllerRevision(parentSet("db"), setKind, nil, rawData(`{}`), 1, nil)
	require.NoError(t, err)
	assert.Len(t, cr.Labels, 1, "nil template labels still get the hash label")

	_, err = NewControllerRevision(nil, setKind, nil, rawData(`{}`), 1, nil)
	assert.Error(t, err)
}

func TestSortControllerRevisions(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rev := func(name string, revision int64, created time.Time) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}, Revision: revision}
	}
	a := rev("a", 2, t0)
	b := rev("b", 1, t0.Add(time.Second))
	c := rev("c", 1, t0)
	d := rev("d", 1, t0)
	e := rev("c", 1, t0) // indistinguishable from c: keeps its place
	in := []*appsv1.ControllerRevision{a, nil, e, b, d, c}
	SortControllerRevisions(in)
	assert.Equal(t, []*appsv1.ControllerRevision{e, c, d, b, a, nil}, in)
	SortControllerRevisions(nil)
}

func TestEqualRevision(t *testing.T) {
	x := &appsv1.ControllerRevision{Data: rawData(`{"a":1}`)}
	y := &appsv1.ControllerRevision{Data: rawData(`{"a":1}`), Revision: 9}
	z := &appsv1.ControllerRevision{Data: rawData(`{"a": 1}`)}
	assert.True(t, EqualRevision(nil, nil))
	assert.False(t, EqualRevision(x, nil))
	assert.False(t, EqualRevision(nil, x))
	assert.True(t, EqualRevision(x, y), "only the data counts")
	assert.False(t, EqualRevision(x, z), "raw data compares byte for byte")

	p1 := &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: parentSet("a")}}
	p2 := &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: parentSet("a")}}
	p3 := &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: parentSet("b")}}
	assert.True(t, EqualRevision(p1, p2))
	assert.False(t, EqualRevision(p1, p3))

	assert.Equal(t, []*appsv1.ControllerRevision{x, y}, FindEqualRevisions([]*appsv1.ControllerRevision{x, z, nil, y}, x))
	assert.Nil(t, FindEqualRevisions([]*appsv1.ControllerRevision{x, y}, z))
	assert.Equal(t, []*appsv1.ControllerRevision{nil}, FindEqualRevisions([]*appsv1.ControllerRevision{x, nil}, nil))
}
