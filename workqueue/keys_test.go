package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestKeyFunc(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0"}}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	for _, tt := range []struct {
		name string
		obj  any
		want string
	}{
		{"namespaced", pod, "ns/web-0"},
		{"cluster-scoped", node, "n1"},
		{"tombstone", cache.DeletedFinalStateUnknown{Key: "ns/gone", Obj: pod}, "ns/gone"},
		{"explicit key", cache.ExplicitKey("ns/explicit"), "ns/explicit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KeyFunc(tt.obj)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			// The same answers as the function upstream's KeyFunc is.
			upstream, err := cache.DeletionHandlingMetaNamespaceKeyFunc(tt.obj)
			require.NoError(t, err)
			assert.Equal(t, upstream, got)
		})
	}

	for _, bad := range []any{nil, "ns/name", 42, struct{}{}} {
		_, err := KeyFunc(bad)
		assert.Error(t, err, "%#v has no metadata", bad)
	}

	// Usable wherever client-go wants a key function.
	store := cache.NewStore(KeyFunc)
	require.NoError(t, store.Add(pod))
	_, found, err := store.GetByKey("ns/web-0")
	require.NoError(t, err)
	assert.True(t, found)
}

func TestNoResyncPeriodFunc(t *testing.T) {
	assert.Zero(t, NoResyncPeriodFunc())
	// It fits where upstream's ResyncPeriodFunc fields do.
	var resync func() time.Duration = NoResyncPeriodFunc
	assert.Zero(t, resync())
}
