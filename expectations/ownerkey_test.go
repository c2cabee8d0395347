package expectations

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestOwnerKey(t *testing.T) {
	tests := []struct {
		name, ns, owner string
		uid             types.UID
		want            string
	}{
		{name: "namespaced with uid", ns: "default", owner: "rs", uid: "1234", want: "default/rs@1234"},
		{name: "cluster-scoped with uid", owner: "node-pool", uid: "abcd", want: "node-pool@abcd"},
		{name: "namespaced without uid is upstream's key", ns: "default", owner: "rs", want: "default/rs"},
		{name: "cluster-scoped without uid", owner: "rs", want: "rs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := OwnerKey(tt.ns, tt.owner, tt.uid)
			assert.Equal(t, tt.want, got)
			ns, name, uid, err := ParseOwnerKey(got)
			require.NoError(t, err)
			assert.Equal(t, tt.ns, ns)
			assert.Equal(t, tt.owner, name)
			assert.Equal(t, tt.uid, uid)
		})
	}
}

func TestOwnerKeyFor(t *testing.T) {
	rs := &metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: "u1"}
	tests := []struct {
		name string
		obj  metav1.Object
		want string
	}{
		{name: "object meta", obj: rs, want: "ns/rs@u1"},
		{name: "pod", obj: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "b", UID: "c"}}, want: "a/b@c"},
		{name: "cluster-scoped", obj: &metav1.ObjectMeta{Name: "n", UID: "u"}, want: "n@u"},
		{name: "no UID gives the plain key", obj: &metav1.ObjectMeta{Namespace: "ns", Name: "rs"}, want: "ns/rs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, OwnerKeyFor(tt.obj))
		})
	}
}

func TestOwnerKeyForRef(t *testing.T) {
	assert.Equal(t, "", OwnerKeyForRef("ns", nil))
	ref := &metav1.OwnerReference{Kind: "ReplicaSet", Name: "rs", UID: "u1"}
	rs := &metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: "u1"}
	assert.Equal(t, OwnerKeyFor(rs), OwnerKeyForRef("ns", ref), "the pod handler and the sync must agree")
}

func TestParseOwnerKeyErrors(t *testing.T) {
	for _, key := range []string{"", "@uid", "ns/@uid", "/name", "a/b/c", "ns/name@", "a/b/c@u", "ns/"} {
		t.Run(key, func(t *testing.T) {
			_, _, _, err := ParseOwnerKey(key)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidOwnerKey)
		})
	}
}

// An owner key with text appended after the UID is not an owner key: a UID
// never contains '/', '@' or '#'. The old parser read
// OwnerKeyFor(job)+"/worker/pods" as the UID "uid-1/worker/pods".
func TestParseOwnerKeyRefusesSuffixedUID(t *testing.T) {
	job := &metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "uid-1"}
	for _, key := range []string{
		OwnerKeyFor(job) + "/worker/pods",
		OwnerKeyFor(job) + "@again",
		OwnerKeyFor(job) + "#worker",
	} {
		_, _, uid, err := ParseOwnerKey(key)
		assert.ErrorIs(t, err, ErrInvalidOwnerKey, key)
		assert.Contains(t, fmt.Sprint(err), "UID contains", key)
		assert.Empty(t, uid, key)
	}
	// The scoped form of the same key is what to build instead.
	ns, name, uid, scope, err := ParseOwnerScopeKey(MustScope("worker-pods").KeyFor(job))
	require.NoError(t, err)
	assert.Equal(t, []string{"ns", "job", "uid-1", "worker-pods"}, []string{ns, name, string(uid), scope})
}

// TestRecreatedOwnerDoesNotInheritExpectations pins the fix for
// kubernetes#142142: an owner deleted and re-created under the same name
// must not wait on its predecessor's unfulfilled expectations.
func TestRecreatedOwnerDoesNotInheritExpectations(t *testing.T) {
	c, clk, logs := newTestCache(t, time.Minute)
	old := &metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-old"}
	recreated := &metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-new"}

	// The old owner expects 3 pods; only one creation is ever observed
	// before it is deleted (and the delete handler was missed or raced).
	require.NoError(t, c.ExpectCreations(OwnerKeyFor(old), 3))
	c.CreationObservedNamed(OwnerKeyForRef("default", &metav1.OwnerReference{Name: "web", UID: "uid-old"}), "web-1")
	assert.False(t, c.SatisfiedExpectations(OwnerKeyFor(old)))

	// Upstream's plain key would be shared, and the new owner stalled.
	assert.True(t, c.SatisfiedExpectations(OwnerKeyFor(recreated)), "the new incarnation starts clean")
	require.NoError(t, c.ExpectCreations(OwnerKeyFor(recreated), 1))

	// A late pod event of the old owner cannot lower the new record.
	c.CreationObserved(OwnerKeyForRef("default", &metav1.OwnerReference{Name: "web", UID: "uid-old"}))
	assert.False(t, c.SatisfiedExpectations(OwnerKeyFor(recreated)))
	c.CreationObserved(OwnerKeyForRef("default", &metav1.OwnerReference{Name: "web", UID: "uid-new"}))
	assert.True(t, c.SatisfiedExpectations(OwnerKeyFor(recreated)))

	// The old record expires and is evicted, logged once as unfulfilled.
	clk.Step(time.Minute + time.Second)
	assert.Equal(t, 2, c.Len())
	assert.Equal(t, 2, c.EvictExpired())
	assert.Zero(t, c.Len())
	lines := logs.matching("expired before they were fulfilled")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "uid-old")
}

func FuzzParseOwnerKey(f *testing.F) {
	for _, seed := range []string{"", "ns/name", "name", "ns/name@uid", "name@uid", "@", "/", "a/b/c", "ns/n@u@v", "ns/name@"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		ns, name, uid, err := ParseOwnerKey(key)
		if err != nil {
			assert.ErrorIs(t, err, ErrInvalidOwnerKey)
			return
		}
		assert.NotEmpty(t, name)
		assert.Equal(t, key, OwnerKey(ns, name, uid), "a parsed key must rebuild to itself")
	})
}
