package childsetcr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/childsetcr"
)

// The index keys are claim's, so an owner's children and a namespace's
// orphans are each one lookup, as in childset's IndexerLister.
func TestListerByController(t *testing.T) {
	web, db := replicaSet("web", 1, "web"), replicaSet("db", 1, "db")
	c := fakeClient(t, interceptor.Funcs{},
		pod("ns", "w1", "", "web", web, "ReplicaSet"),
		pod("ns", "w2", "", "web", web, "ReplicaSet"),
		pod("ns", "d1", "", "db", db, "ReplicaSet"),
		pod("ns", "o1", "", "web", nil, ""),
		pod("other", "o2", "", "web", nil, ""),
	)
	l, err := childsetcr.NewLister[*corev1.Pod](c, c.Scheme())
	require.NoError(t, err)

	webRef := ref(web, "ReplicaSet")
	got, err := l.ListControlledBy("ns", &webRef)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"w1", "w2"}, names(got))
	orphans, err := l.ListControlledBy("ns", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"o1"}, names(orphans))
	// A reference to another UID of the same name finds nothing.
	stale := webRef
	stale.UID = "other-uid"
	got, err = l.ListControlledBy("ns", &stale)
	require.NoError(t, err)
	assert.Empty(t, got)

	p, found, err := l.Get("ns", "d1")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "d1", p.Name)
	_, found, err = l.Get("ns", "missing")
	require.NoError(t, err)
	assert.False(t, found)

	assert.Equal(t, []string{claim.ControllerIndexKey("ns", &webRef)}, childsetcr.IndexByController(pod("ns", "w1", "", "web", web, "ReplicaSet")))
	assert.Equal(t, []string{"ns"}, childsetcr.IndexByController(pod("ns", "o1", "", "web", nil, "")))
}

// A list or get that fails is an error, not an empty answer.
func TestListerErrors(t *testing.T) {
	c := fakeClient(t, interceptor.Funcs{
		List: func(_ context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
			return errBoom
		},
		Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			return errBoom
		},
	})
	l, err := childsetcr.NewLister[*corev1.Pod](c, c.Scheme())
	require.NoError(t, err)
	_, err = l.ListControlledBy("ns", nil)
	require.ErrorIs(t, err, errBoom)
	_, _, err = l.Get("ns", "p")
	require.ErrorIs(t, err, errBoom)
}

var errBoom = errors.New("boom")

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// countingIndexer is a client.FieldIndexer that counts registrations and
// fails while err is set.
type countingIndexer struct {
	fields []string
	err    error
}

func (c *countingIndexer) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	if c.err != nil {
		return c.err
	}
	if fn == nil {
		return errors.New("no index function")
	}
	c.fields = append(c.fields, fmt.Sprintf("%T %s", obj, field))
	return nil
}

// The index is registered once per indexer and child type: a second
// controller over the same child kind shares it, and a failed registration
// is not remembered, so a retry registers it.
func TestAddControllerIndexOnce(t *testing.T) {
	ctx := context.Background()
	failing := &countingIndexer{err: errBoom}
	require.ErrorIs(t, childsetcr.AddControllerIndex[*corev1.Pod](ctx, failing), errBoom)
	failing.err = nil
	require.NoError(t, childsetcr.AddControllerIndex[*corev1.Pod](ctx, failing))
	require.NoError(t, childsetcr.AddControllerIndex[*corev1.Pod](ctx, failing))
	require.NoError(t, childsetcr.AddControllerIndex[*corev1.ConfigMap](ctx, failing))
	assert.Equal(t, []string{"*v1.Pod " + childsetcr.ControllerField, "*v1.ConfigMap " + childsetcr.ControllerField}, failing.fields)

	other := &countingIndexer{}
	require.NoError(t, childsetcr.AddControllerIndex[*corev1.Pod](ctx, other))
	assert.Len(t, other.fields, 1, "another cache gets its own index")
}
