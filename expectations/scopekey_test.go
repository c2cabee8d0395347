package expectations

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestOwnerScopeKey(t *testing.T) {
	cases := []struct {
		namespace, name string
		uid             types.UID
		scope, want     string
	}{
		{"ns", "job", "u1", "worker", "ns/job#worker@u1"},
		{"ns", "job", "", "ps", "ns/job#ps"},
		{"", "cluster-wide", "u2", "worker", "cluster-wide#worker@u2"},
	}
	for _, tc := range cases {
		got, err := OwnerScopeKey(tc.namespace, tc.name, tc.uid, tc.scope)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
		ns, name, uid, scope, err := ParseOwnerScopeKey(got)
		require.NoError(t, err)
		assert.Equal(t, [4]string{tc.namespace, tc.name, string(tc.uid), tc.scope}, [4]string{ns, name, string(uid), scope}, "round trip")
	}
	for _, bad := range []string{"", "a#b", "a@b", "a/b"} {
		_, err := OwnerScopeKey("ns", "job", "u", bad)
		require.ErrorIs(t, err, ErrInvalidOwnerKey, "scope %q", bad)
	}
	for _, bad := range []string{"ns/job@u", "ns/#worker@u", "ns/job#@u", "ns/job#a#b@u", "a/b/c#s"} {
		_, _, _, _, err := ParseOwnerScopeKey(bad)
		require.ErrorIs(t, err, ErrInvalidOwnerKey, "key %q", bad)
	}
}

// TestOwnerScopeKeyKeepsUIDBinding: scopes of one owner are separate
// records, and a re-created owner (new UID) never sees its predecessor's.
func TestOwnerScopeKeyKeepsUIDBinding(t *testing.T) {
	c := NewControllerExpectations()
	old := &metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "old"}
	workers, err := OwnerScopeKeyFor(old, "worker")
	require.NoError(t, err)
	ps, err := OwnerScopeKeyFor(old, "ps")
	require.NoError(t, err)
	require.NoError(t, c.ExpectCreations(workers, 2))
	require.NoError(t, c.ExpectCreations(ps, 1))

	ref := metav1.NewControllerRef(old, metav1.SchemeGroupVersion.WithKind("Job"))
	fromRef, err := OwnerScopeKeyForRef("ns", ref, "ps")
	require.NoError(t, err)
	assert.Equal(t, ps, fromRef)
	c.CreationObserved(fromRef)
	assert.True(t, c.SatisfiedExpectations(ps), "the ps scope is satisfied")
	assert.False(t, c.SatisfiedExpectations(workers), "the worker scope is not")

	recreated := &metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "new"}
	fresh, err := OwnerScopeKeyFor(recreated, "worker")
	require.NoError(t, err)
	assert.NotEqual(t, workers, fresh)
	assert.True(t, c.SatisfiedExpectations(fresh), "a new incarnation starts with no record")

	_, err = OwnerScopeKeyForRef("ns", nil, "worker")
	require.Error(t, err)
}

// A constant scope is validated once; its keys equal OwnerScopeKey's and
// have no error path. An invalid constant panics where it is made.
func TestScope(t *testing.T) {
	workers := MustScope("worker")
	job := &metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "u1"}
	want, err := OwnerScopeKeyFor(job, "worker")
	require.NoError(t, err)
	assert.Equal(t, want, workers.KeyFor(job))
	assert.Equal(t, "cluster-wide#worker@u2", workers.Key("", "cluster-wide", "u2"))
	ref := metav1.NewControllerRef(job, metav1.SchemeGroupVersion.WithKind("Job"))
	assert.Equal(t, want, workers.KeyForRef("ns", ref))
	assert.Equal(t, "", workers.KeyForRef("ns", nil))
	assert.Equal(t, "worker", workers.String())

	for _, bad := range []string{"", "a#b", "a@b", "a/b"} {
		_, err := NewScope(bad)
		require.ErrorIs(t, err, ErrInvalidOwnerKey, "scope %q", bad)
		assert.Panics(t, func() { MustScope(bad) }, "scope %q", bad)
	}
	assert.PanicsWithValue(t, "expectations: zero Scope; build it with MustScope or NewScope",
		func() { Scope{}.KeyFor(job) })
}

// A controller that creates two kinds of pods for one owner keeps one
// expectations record per kind.
func ExampleOwnerScopeKey() {
	workers, _ := OwnerScopeKey("team-a", "train", "3f2c", "worker")
	ps, _ := OwnerScopeKey("team-a", "train", "3f2c", "ps")
	fmt.Println(workers)
	fmt.Println(ps)
	// Output:
	// team-a/train#worker@3f2c
	// team-a/train#ps@3f2c
}

// Scopes the controller knows at compile time are made once; their keys
// cannot fail.
func ExampleMustScope() {
	workerPods := MustScope("worker-pods") // usually a package-level var
	job := &metav1.ObjectMeta{Namespace: "team-a", Name: "train", UID: "3f2c"}
	fmt.Println(workerPods.KeyFor(job))
	// Output:
	// team-a/train#worker-pods@3f2c
}
