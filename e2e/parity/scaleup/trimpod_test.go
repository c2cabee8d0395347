package scaleup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	uprs "k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/utils/ptr"

	ckrs "github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podset"
)

// upstreamSyncReplicaSet is upstream's (*ReplicaSetController).syncReplicaSet.
//
//go:linkname upstreamSyncReplicaSet k8s.io/kubernetes/pkg/controller/replicaset.(*ReplicaSetController).syncReplicaSet
func upstreamSyncReplicaSet(rsc *uprs.ReplicaSetController, ctx context.Context, key string) error

// trimCase builds a ReplicaSet and pods that touch every field podset.TrimPod keeps:
// pending pods on no node, unready and ready pods with spread ready times,
// restarts in containers and init containers, deletion costs, terminating
// pods, orphans to adopt and pods with foreign labels, plus fields the
// transform drops (containers, managedFields, other annotations).
func trimCase(seed uint64, replicas int32, minReady int32) (*appsv1.ReplicaSet, []*v1.Pod) {
	r := rand.New(rand.NewPCG(seed, 3))
	now := time.Now().Truncate(time.Second)
	labels := map[string]string{"app": "trim"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "trim", Namespace: "ns", UID: "rs-uid", Generation: 2, ResourceVersion: "5",
			// Owned by a Deployment, so that both controllers count the
			// pods per node (related pods) when they rank.
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "trim", UID: "deploy-uid", Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas), MinReadySeconds: minReady,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
	ref := metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	var pods []*v1.Pod
	for i := range 60 {
		created := clearOfBucketEdges(now, now.Add(-time.Duration(r.IntN(3600))*time.Second))
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "p-" + strconv.Itoa(i), Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%03d", i)), ResourceVersion: "7",
				Labels: map[string]string{"app": "trim", "extra": "x"}, CreationTimestamp: metav1.NewTime(created),
				Annotations:   map[string]string{"note": "dropped"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
			},
			Spec: v1.PodSpec{NodeName: "node-" + strconv.Itoa(r.IntN(8)), Containers: []v1.Container{{Name: "c", Image: "img"}}},
			Status: v1.PodStatus{
				Phase: v1.PodRunning, PodIP: "10.0.0.1",
				ContainerStatuses: []v1.ContainerStatus{
					{Name: "c", RestartCount: int32(r.IntN(3)), Image: "img", Ready: true},
					{Name: "d", RestartCount: int32(r.IntN(3)), Image: "img", Ready: true},
				},
				InitContainerStatuses: []v1.ContainerStatus{{Name: "i", RestartCount: int32(r.IntN(3))}},
			},
		}
		if r.IntN(2) == 0 {
			p.Spec.InitContainers = []v1.Container{{Name: "i", Image: "img", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}}
		} else {
			p.Spec.InitContainers = []v1.Container{{Name: "i", Image: "img"}}
		}
		switch k := r.IntN(10); {
		case k == 0:
			p.Spec.NodeName, p.Status.Phase = "", v1.PodPending
		case k == 1:
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)}}
		case k == 3 && r.IntN(2) == 0:
			// Running on no node: only the assigned rule tells it apart.
			p.Spec.NodeName = ""
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)}}
		case k == 2:
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = ptr.To(metav1.NewTime(now)), ptr.To[int64](30)
		default:
			ready := clearOfBucketEdges(now, created.Add(time.Duration(r.IntN(120))*time.Second))
			p.Status.Conditions = []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
			}
		}
		if r.IntN(4) == 0 {
			p.Annotations[podranking.DeletionCostAnnotation] = strconv.Itoa(r.IntN(20) - 10)
		}
		switch r.IntN(12) {
		case 0: // orphan to adopt
		case 1: // foreign labels, not ours
			p.Labels = map[string]string{"app": "other"}
		default:
			p.OwnerReferences = []metav1.OwnerReference{*ref}
		}
		pods = append(pods, p)
	}
	return rs, pods
}

// trimOutcome is what one sync did: the pods it deleted, the ones it adopted
// (patched), how many it created, and the status it wrote.
type trimOutcome struct {
	deleted, patched []string
	created          int
	status           *appsv1.ReplicaSetStatus
}

func syncOnce(t *testing.T, impl string, rs *appsv1.ReplicaSet, pods []*v1.Pod, transform bool) trimOutcome {
	t.Helper()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()
	client := fake.NewClientset(rs.DeepCopy())
	var mu sync.Mutex
	var out trimOutcome
	client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		out.deleted = append(out.deleted, a.(clienttesting.DeleteAction).GetName())
		return true, nil, nil
	})
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		out.created++
		return true, a.(clienttesting.CreateAction).GetObject(), nil
	})
	client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		name := a.(clienttesting.PatchAction).GetName()
		out.patched = append(out.patched, name)
		for _, p := range pods {
			if p.Name == name {
				return true, p.DeepCopy(), nil
			}
		}
		return true, nil, fmt.Errorf("no pod %s", name)
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	podInf, rsInf := factory.Core().V1().Pods(), factory.Apps().V1().ReplicaSets()
	var syncFn func(context.Context, string) error
	switch impl {
	case "upstream":
		c := uprs.NewReplicaSetController(ctx, rsInf, podInf, client, burstReplicas)
		syncFn = func(ctx context.Context, key string) error { return upstreamSyncReplicaSet(c, ctx, key) }
	case "ctrlkit":
		c, err := ckrs.NewReplicaSetController(ctx, client, podInf, rsInf)
		if err != nil {
			t.Fatal(err)
		}
		syncFn = func(ctx context.Context, key string) error { _, err := c.Reconcile(ctx, key); return err }
	}
	if err := rsInf.Informer().GetIndexer().Add(rs.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		var obj any = p.DeepCopy()
		if transform {
			var err error
			if obj, err = podset.TrimPod(obj); err != nil {
				t.Fatal(err)
			}
		}
		if err := podInf.Informer().GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := syncFn(ctx, "ns/trim"); err != nil {
		t.Fatalf("%s sync: %v", impl, err)
	}
	for _, a := range client.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			st := u.GetObject().(*appsv1.ReplicaSet).Status
			for i := range st.Conditions {
				st.Conditions[i].LastTransitionTime = metav1.Time{}
			}
			out.status = &st
		}
	}
	slices.Sort(out.deleted)
	slices.Sort(out.patched)
	return out
}

// TestTrimPodKeepsDecisions runs one sync of each controller over full pods
// and over the same pods through podset.TrimPod, scaling down (ranking, costs,
// nodes, restarts), scaling up, and with minReadySeconds (availability), and
// requires the same deletions, adoptions and status on each side: the
// controllers read nothing podset.TrimPod drops. (podset's own tests check
// the fields it keeps and drops.)
func TestTrimPodKeepsDecisions(t *testing.T) {
	for seed := range uint64(40) {
		for _, c := range []struct {
			name               string
			replicas, minReady int32
		}{{"scaleDown", 20, 0}, {"scaleDownFew", 40, 0}, {"scaleUp", 80, 0}, {"minReady", 20, 600}} {
			rs, pods := trimCase(seed, c.replicas, c.minReady)
			for _, impl := range []string{"upstream", "ctrlkit"} {
				full := syncOnce(t, impl, rs, pods, false)
				trimmed := syncOnce(t, impl, rs, pods, true)
				if !reflect.DeepEqual(full, trimmed) {
					t.Errorf("seed %d %s %s: full pods gave %+v (status %+v), trimmed pods %+v (status %+v)",
						seed, c.name, impl, full, full.status, trimmed, trimmed.status)
				}
				if c.name == "scaleDown" && len(full.deleted) == 0 {
					t.Errorf("seed %d %s: no deletions, the case does not exercise the ranking", seed, impl)
				}
				if c.name == "scaleUp" && full.created == 0 {
					t.Errorf("seed %d %s: no creations in the scale-up case", seed, impl)
				}
			}
		}
	}
}

// clearOfBucketEdges moves t back until its age at now is at least 20 s and
// more than 3 s away from every power of two. Upstream's controller ranks
// with the real clock, in log2 buckets of whole seconds, and the two runs a
// case compares happen a moment apart: an age right at a bucket edge could
// change bucket between them, and with it the pods chosen, whatever the
// transform did.
func clearOfBucketEdges(now, t time.Time) time.Time {
	for {
		age := int64(now.Sub(t) / time.Second)
		near := age < 20
		for edge := int64(16); edge <= 1<<20 && !near; edge *= 2 {
			near = age >= edge-3 && age <= edge+3
		}
		if !near {
			return t
		}
		t = t.Add(-7 * time.Second)
	}
}
