package childset_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/consistency"
)

// newestRV is the highest resource version among the API's children.
func (e *env) newestRV() string {
	newest := 0
	for _, cm := range e.apiChildren() {
		rv, err := strconv.Atoi(cm.ResourceVersion)
		require.NoError(e.t, err)
		newest = max(newest, rv)
	}
	return strconv.Itoa(newest)
}

// With the guard on, an owner whose children cache has not yet seen the
// core's own adoption or creation is held (ErrStaleCache, nothing read or
// written) until it has.
func TestReadYourWritesHoldsUntilTheCacheHasTheWrites(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name     string
		replicas int32
		want     []string
	}{
		{"an adoption", 1, []string{"patch web-0"}},
		{"an adoption and a creation", 2, []string{"patch web-0", "create web-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &storeAt{}
			store.rv.Store("1")
			e := newEnv(t, childset.WithIndexedNames(nil), childset.WithReadYourWrites(consistency.NewGuard(consistency.WithStore(gr, store))))
			e.addOwner(newOwner("web", tc.replicas))
			e.seed(newChild("web-0", nil, map[string]string{"app": "web"}))
			e.reconcile("web")
			require.Equal(t, tc.want, e.writes())

			_, err := e.r.Reconcile(context.Background(), ns+"/web")
			require.ErrorIs(t, err, consistency.ErrStaleCache)
			assert.Equal(t, tc.want, e.writes(), "a held owner writes nothing")

			store.rv.Store(e.newestRV())
			e.catchUp()
			e.reconcile("web")
			assert.Equal(t, tc.want, e.writes(), "caught up, and nothing more to do")
		})
	}
}

// liveSpec reads the owner "live" from a separate map, as a Spec over an
// API client would.
type liveSpec struct {
	rsSpec
	live map[string]*appsv1.ReplicaSet
}

func (s liveSpec) GetLive(_ context.Context, _, name string) (*appsv1.ReplicaSet, error) {
	return s.live[name], nil
}

// An owner the cache shows alive but the API server shows being deleted, or
// re-created under another UID, adopts nothing and so creates nothing.
func TestLiveOwnerDecidesAdoption(t *testing.T) {
	cached := newOwner("web", 2)
	deleting := cached.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	recreated := cached.DeepCopy()
	recreated.UID = "other"
	for name, live := range map[string]*appsv1.ReplicaSet{"being deleted": deleting, "re-created": recreated, "alive": cached} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, childset.WithIndexedNames(nil))
			e.r = childset.NewReconciler[*appsv1.ReplicaSet](liveSpec{rsSpec{e.owners}, map[string]*appsv1.ReplicaSet{"web": live}},
				cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}, configMapControl(e.client, nil), childset.WithIndexedNames(nil))
			e.addOwner(cached)
			e.seed(newChild("web-0", nil, map[string]string{"app": "web"}))
			_, err := e.r.Reconcile(context.Background(), ns+"/web")
			if live == cached {
				require.NoError(t, err)
				assert.Equal(t, []string{"patch web-0", "create web-1"}, e.writes())
				return
			}
			require.Error(t, err)
			assert.Empty(t, e.writes(), "no adoption, and no creation beside a child the owner failed to adopt")
		})
	}
}

// storeAt is an informer store whose applied resource version the test
// sets.
type storeAt struct{ rv atomic.Value }

func (s *storeAt) LastStoreSyncResourceVersion() string { return s.rv.Load().(string) }
