package childset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/claim"
	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// rollingWorkerSet rolls its workers' ConfigMaps out as a StatefulSet
// rolls its pods: the template records the "version" annotation, and the
// strategy, the history limit and the collision count are the
// StatefulSet's.
type rollingWorkerSet struct{ workerSet }

func (rollingWorkerSet) NewChild(s *appsv1.StatefulSet) (*v1.ConfigMap, error) {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: s.Spec.Template.Labels},
		Data: map[string]string{"version": s.Spec.Template.Annotations["version"]}}, nil
}

func (rollingWorkerSet) RollingUpdate(s *appsv1.StatefulSet) (childset.RollingUpdate, bool) {
	ru := s.Spec.UpdateStrategy.RollingUpdate
	if s.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType || ru == nil {
		return childset.RollingUpdate{}, false
	}
	zero := intstr.FromInt32(0)
	out := childset.RollingUpdate{MaxSurge: &zero, MaxUnavailable: ru.MaxUnavailable}
	if ru.Partition != nil {
		out.Partition = *ru.Partition
	}
	return out, true
}

func (rollingWorkerSet) RevisionHistoryLimit(s *appsv1.StatefulSet) int32 {
	if s.Spec.RevisionHistoryLimit == nil {
		return 10
	}
	return *s.Spec.RevisionHistoryLimit
}

func (rollingWorkerSet) CollisionCount(s *appsv1.StatefulSet) *int32 { return s.Status.CollisionCount }

func (w rollingWorkerSet) UpdateStatus(_ context.Context, s *appsv1.StatefulSet, st childset.Status) error {
	s = s.DeepCopy()
	s.Status.UpdatedReplicas, s.Status.CurrentRevision, s.Status.UpdateRevision = st.UpdatedReplicas, st.CurrentRevision, st.UpdateRevision
	s.Status.CollisionCount = &st.CollisionCount
	return w.store.Update(s)
}

// ExampleRolloutSpec rolls three indexed ConfigMaps from v1 to v2, one
// index at a time, highest first.
func ExampleRolloutSpec() {
	ctx := context.Background()
	client := fake.NewClientset()
	owners := cache.NewStore(cache.MetaNamespaceKeyFunc)
	children := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{childset.ControllerIndex: claim.IndexByController})
	revisions := informers.NewSharedInformerFactory(client, 0).Apps().V1().ControllerRevisions()

	replicas, maxUnavailable := int32(3), intstr.FromInt32(1)
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", UID: "train-uid"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"set": "train"}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"set": "train"},
				Annotations: map[string]string{"version": "v1"}}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &maxUnavailable}},
		},
	}
	_ = owners.Add(set)
	configMaps := objectcontrol.New("ConfigMap", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*v1.ConfigMap] { return client.CoreV1().ConfigMaps(ns) }),
		nil, types.StrategicMergePatchType)
	r := childset.NewReconciler(rollingWorkerSet{workerSet{owners}}, workerConfig{childset.IndexerLister[*v1.ConfigMap](children)},
		configMaps, childset.WithIndexedNames(nil), childset.WithRevisions(history.NewFakeHistory(revisions)))

	// pass syncs the set once, then lets the cache catch up with the API,
	// as an informer would, and shows the workers' versions.
	pass := func() string {
		if _, err := r.Reconcile(ctx, "ml/train"); err != nil {
			return err.Error()
		}
		list, _ := client.CoreV1().ConfigMaps("ml").List(ctx, metav1.ListOptions{})
		live := map[string]bool{}
		var shown []string
		for i := range list.Items {
			cm := &list.Items[i]
			live[cm.Name] = true
			if _, found, _ := children.GetByKey("ml/" + cm.Name); !found {
				_ = children.Add(cm)
				r.ObserveAdd(cm)
			}
			shown = append(shown, cm.Name+"="+cm.Data["version"])
		}
		for _, obj := range children.List() {
			if cm := obj.(*v1.ConfigMap); !live[cm.Name] {
				_ = children.Delete(cm)
				r.ObserveDelete(cm, false)
			}
		}
		slices.Sort(shown)
		return strings.Join(shown, " ")
	}

	fmt.Println(pass())
	obj, _, _ := owners.GetByKey("ml/train")
	set = obj.(*appsv1.StatefulSet).DeepCopy()
	set.Spec.Template.Annotations["version"] = "v2"
	_ = owners.Update(set)
	for range 6 {
		fmt.Println(pass())
	}
	pass() // a sync's status counts what it saw: one more shows the last creation
	obj, _, _ = owners.GetByKey("ml/train")
	st := obj.(*appsv1.StatefulSet).Status
	fmt.Println("revisions:", len(revisions.Informer().GetStore().List()), "updated:", st.UpdatedReplicas,
		"current is update:", st.CurrentRevision == st.UpdateRevision)
	// Output:
	// train-0=v1 train-1=v1 train-2=v1
	// train-0=v1 train-1=v1
	// train-0=v1 train-1=v1 train-2=v2
	// train-0=v1 train-2=v2
	// train-0=v1 train-1=v2 train-2=v2
	// train-1=v2 train-2=v2
	// train-0=v2 train-1=v2 train-2=v2
	// revisions: 2 updated: 3 current is update: true
}
