package childset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// webSpec owns ConfigMaps labelled app=web for ReplicaSets.
type webSpec struct{}

func (webSpec) Get(string, string) (*appsv1.ReplicaSet, error) { return nil, nil }
func (webSpec) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (webSpec) Replicas(*appsv1.ReplicaSet) int32 { return 1 }
func (webSpec) Selector(*appsv1.ReplicaSet) (labels.Selector, error) {
	return labels.SelectorFromSet(labels.Set{"app": "web"}), nil
}
func (webSpec) NewChild(*appsv1.ReplicaSet) (*v1.ConfigMap, error) { return &v1.ConfigMap{}, nil }

// An orphan's update wakes the owners that may adopt it only when it was
// just released or its labels changed, and an object another controller
// holds wakes none of them: the rule of claim.Adopters, as podset's.
func TestOrphanUpdatesWakeTheAdoptersOnlyWhenTheyMatter(t *testing.T) {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	owners, children := f.Apps().V1().ReplicaSets().Informer(), f.Core().V1().ConfigMaps().Informer()
	c, err := New[*appsv1.ReplicaSet, *v1.ConfigMap](owners, children, webSpec{}, readyKind{IndexerLister[*v1.ConfigMap](children.GetIndexer())},
		&objectcontrol.Fake[*v1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	if err := owners.GetIndexer().Add(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	orphan := func(rv string, lbls map[string]string, refs ...metav1.OwnerReference) *v1.ConfigMap {
		return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", ResourceVersion: rv, Labels: lbls, OwnerReferences: refs}}
	}
	web, other := map[string]string{"app": "web"}, map[string]string{"app": "other"}
	foreign := metav1.OwnerReference{APIVersion: "v1", Kind: "Other", Name: "x", UID: "x", Controller: new(true)}
	for name, tc := range map[string]struct {
		old, cur *v1.ConfigMap
		queued   int
	}{
		"annotation only":         {orphan("1", web), orphan("2", web), 0},
		"labels now match":        {orphan("1", other), orphan("2", web), 1},
		"released":                {orphan("1", web, foreign), orphan("2", web), 1},
		"held by another kind":    {orphan("1", other, foreign), orphan("2", web, foreign), 0},
		"labels no longer match":  {orphan("1", web), orphan("2", other), 0},
		"resync, nothing changed": {orphan("1", other), orphan("1", web), 0},
	} {
		c.childUpdated(tc.old, tc.cur)
		if got := c.queue.Len(); got != tc.queued {
			t.Errorf("%s: %d owners queued, want %d", name, got, tc.queued)
		}
		for c.queue.Len() > 0 {
			key, _ := c.queue.Get()
			c.queue.Done(key)
		}
	}
}
