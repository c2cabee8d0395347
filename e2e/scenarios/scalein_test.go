package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podset"
)

// deleteFirstAnnotation lists, comma-separated, the children a scale-down
// of the scenario's owners deletes first.
const deleteFirstAnnotation = "e2e.ctrlkit.io/delete-first"

func namesToDeleteFirst(owner metav1.Object) []string {
	return strings.Split(owner.GetAnnotations()[deleteFirstAnnotation], ",")
}

// scaleInPatch scales an owner to replicas and names the children to
// delete first, in one write.
func scaleInPatch(replicas int, names []string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}},"spec":{"replicas":%d}}`,
		deleteFirstAnnotation, strings.Join(names, ","), replicas)
}

// namingReplicaSetKind is the example's ReplicaSet kind that names the pods
// to delete first from the owner's annotation.
type namingReplicaSetKind struct{ *replicaset.ReplicaSetKind }

func (namingReplicaSetKind) ChildrenToDeleteFirst(rs *appsv1.ReplicaSet) []string {
	return namesToDeleteFirst(rs)
}

// TestScaleInByNamePods scales a ReplicaSet of five pods, run by podset,
// down by two, naming two pods upstream's ranking would keep: exactly those
// are deleted.
func TestScaleInByNamePods(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	ctx, cancel := context.WithCancel(s.ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	rsInformer := factory.Apps().V1().ReplicaSets()
	kind, err := replicaset.NewReplicaSetKind(s.ctrlClient, rsInformer)
	require.NoError(t, err)
	c, err := podset.New(ctx, s.ctrlClient, factory.Core().V1().Pods(), rsInformer.Informer(), namingReplicaSetKind{kind},
		podset.WithEventRecorder(&warningRecorder{}))
	require.NoError(t, err)
	factory.Start(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, factory.Shutdown)

	lbls := map[string]string{"app": "scale-in"}
	rs := s.createRS("scale-in", 5, lbls)
	var pods []corev1.Pod
	s.eventually(time.Minute, "five pods", func() (bool, string) {
		pods = activePods(ownedBy(s.listPods("app=scale-in"), rs.UID))
		return len(pods) == 5, fmt.Sprintf("%d pods", len(pods))
	})
	// Name the two pods the ranking deletes last.
	ptrs := make([]*corev1.Pod, len(pods))
	for i := range pods {
		ptrs[i] = &pods[i]
	}
	order := podranking.NewSelector().Order(ptrs, ptrs)
	named := []string{order[3].Name, order[4].Name}

	_, err = s.client.AppsV1().ReplicaSets(s.ns).Patch(s.ctx, rs.Name, types.MergePatchType, scaleInPatch(3, named), metav1.PatchOptions{})
	require.NoError(t, err)
	s.requireRemaining(time.Minute, func() []string {
		return podNamesOf(activePods(ownedBy(s.listPods("app=scale-in"), rs.UID)))
	}, podNamesOf(pods), named)
}

// scaleInSpec is a childset Spec: ReplicaSets (inert here, no
// kube-controller-manager runs) owning ConfigMaps, named to delete first
// from the owner's annotation.
type scaleInSpec struct{ lister appslisters.ReplicaSetLister }

func (s scaleInSpec) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	return s.lister.ReplicaSets(namespace).Get(name)
}
func (scaleInSpec) GroupVersionKind() schema.GroupVersionKind {
	return appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
}
func (scaleInSpec) Replicas(rs *appsv1.ReplicaSet) int32 { return *rs.Spec.Replicas }
func (scaleInSpec) Selector(rs *appsv1.ReplicaSet) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(rs.Spec.Selector)
}
func (scaleInSpec) NewChild(rs *appsv1.ReplicaSet) (*corev1.ConfigMap, error) {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: rs.Spec.Template.Labels}}, nil
}
func (scaleInSpec) ChildrenToDeleteFirst(rs *appsv1.ReplicaSet) []string {
	return namesToDeleteFirst(rs)
}

type readyConfigMaps struct {
	childset.Lister[*corev1.ConfigMap]
}

func (readyConfigMaps) Ready(*corev1.ConfigMap) bool { return true }

// TestScaleInByNameChildren scales an owner of five ConfigMaps, run by
// childset's client-go driver, down by two, naming two ConfigMaps the
// deletion order would keep: exactly those are deleted.
func TestScaleInByNameChildren(t *testing.T) {
	s := newScenario(t, 3*time.Minute)
	ctx, cancel := context.WithCancel(s.ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(s.ctrlClient, 0, informers.WithNamespace(s.ns))
	owners := factory.Apps().V1().ReplicaSets()
	children := factory.Core().V1().ConfigMaps().Informer()
	require.NoError(t, childset.AddControllerIndexer(children))
	control := objectcontrol.New("ConfigMap", objectcontrol.TypedWriter(
		func(ns string) objectcontrol.TypedClient[*corev1.ConfigMap] {
			return s.ctrlClient.CoreV1().ConfigMaps(ns)
		}),
		nil, types.StrategicMergePatchType)
	c, err := childset.New(owners.Informer(), children, scaleInSpec{owners.Lister()},
		readyConfigMaps{childset.IndexerLister[*corev1.ConfigMap](children.GetIndexer())}, control)
	require.NoError(t, err)
	factory.Start(ctx.Done())
	s.runUntilCleanup(ctx, cancel, c.Run, factory.Shutdown)

	lbls := map[string]string{"app": "scale-in-cm"}
	rs := s.createRS("scale-in-cm", 5, lbls)
	list := func() []corev1.ConfigMap {
		l, err := s.client.CoreV1().ConfigMaps(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: "app=scale-in-cm"})
		require.NoError(t, err)
		return l.Items
	}
	var cms []corev1.ConfigMap
	s.eventually(time.Minute, "five ConfigMaps", func() (bool, string) {
		cms = list()
		return len(cms) == 5, fmt.Sprintf("%d ConfigMaps", len(cms))
	})
	// Name the two ConfigMaps the deletion order deletes last.
	ordered := make([]*corev1.ConfigMap, len(cms))
	for i := range cms {
		ordered[i] = &cms[i]
	}
	slices.SortStableFunc(ordered, childset.DefaultOrder(readyConfigMaps{}.Ready))
	named := []string{ordered[3].Name, ordered[4].Name}
	before := make([]string, len(cms))
	for i := range cms {
		before[i] = cms[i].Name
	}

	_, err = s.client.AppsV1().ReplicaSets(s.ns).Patch(s.ctx, rs.Name, types.MergePatchType, scaleInPatch(3, named), metav1.PatchOptions{})
	require.NoError(t, err)
	s.requireRemaining(time.Minute, func() []string {
		var names []string
		for _, cm := range list() {
			if cm.DeletionTimestamp == nil {
				names = append(names, cm.Name)
			}
		}
		return names
	}, before, named)
}

// requireRemaining waits until current() holds exactly before without
// deleted, and checks that it still does a few seconds later: nothing
// else was deleted, and nothing was created in their place.
func (s *scenario) requireRemaining(timeout time.Duration, current func() []string, before, deleted []string) {
	s.t.Helper()
	want := slices.DeleteFunc(slices.Clone(before), func(n string) bool { return slices.Contains(deleted, n) })
	slices.Sort(want)
	same := func() (bool, string) {
		got := slices.Sorted(slices.Values(current()))
		return slices.Equal(got, want), fmt.Sprintf("have %v, want %v", got, want)
	}
	s.eventually(timeout, "the named children deleted", same)
	time.Sleep(3 * time.Second)
	ok, why := same()
	require.True(s.t, ok, "after settling: %s", why)
}

func podNamesOf(pods []corev1.Pod) []string {
	out := make([]string, len(pods))
	for i := range pods {
		out[i] = pods[i].Name
	}
	return out
}
