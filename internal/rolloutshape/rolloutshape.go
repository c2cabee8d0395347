// Package rolloutshape builds the pods a ReplicaSet holds when it scales
// down in the middle of a Deployment's rollout: its own pods and, among its
// related pods, those of a sibling ReplicaSet. The benchmarks of the
// library and of the e2e module rank the same input through it, so that
// their figures describe one shape.
package rolloutshape

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// DeletionCostAnnotation is podranking's annotation, spelled out here so
// that this package imports no feature package.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// Pods returns n active pods of one ReplicaSet on n/20 nodes (500 at
// 10,000 pods) and the related pods a scale-down ranks them among: the same
// pods plus n/2 pods of a sibling ReplicaSet, one in ten of those no longer
// active, in an order unrelated to either set, as a listing of the
// namespace returns them. Everything is drawn from a generator seeded by n,
// so a given n always builds the same pods; now is truncated to the second.
//
// Of each ReplicaSet's pods about 12% are Pending (half of them not yet
// scheduled), 4% Unknown and the rest Running, about 92% of those Ready
// since an instant between their creation and now; about 5% carry a
// deletion cost; one or two containers report restarts, and 10% of the pods
// run a sidecar with restarts of its own. Creation times are log-uniform
// between a minute and a month old, at whole seconds, as the API server
// stores them, and UIDs are random.
func Pods(n int, now time.Time) (pods, related []*v1.Pod) {
	now = now.Truncate(time.Second)
	r := rand.New(rand.NewPCG(0x5ca1ed, uint64(n)))
	nodes := max(1, n/20)
	pods = make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = pod(r, now, "web-a", i, nodes)
	}
	siblings := n / 2
	related = make([]*v1.Pod, 0, n+siblings)
	related = append(related, pods...)
	for i := range siblings {
		p := pod(r, now, "web-b", i, nodes)
		if r.IntN(10) == 0 {
			retire(r, p, now)
		}
		related = append(related, p)
	}
	r.Shuffle(len(related), func(i, j int) { related[i], related[j] = related[j], related[i] })
	return pods, related
}

// pod draws one pod of the ReplicaSet named rs.
func pod(r *rand.Rand, now time.Time, rs string, i, nodes int) *v1.Pod {
	created := now.Add(-logUniform(r, time.Minute, 30*24*time.Hour).Truncate(time.Second))
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              rs + "-" + strconv.Itoa(i),
			Namespace:         "default",
			UID:               types.UID(uuid(r)),
			Labels:            map[string]string{"app": "web", "pod-template-hash": rs},
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: v1.PodSpec{
			NodeName:   "node-" + strconv.Itoa(r.IntN(nodes)),
			Containers: []v1.Container{{Name: "app"}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
	switch k := r.IntN(100); {
	case k < 6: // not scheduled yet
		p.Spec.NodeName = ""
		p.Status.Phase = v1.PodPending
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)}}
		return p
	case k < 12: // scheduled, pulling images
		p.Status.Phase = v1.PodPending
		p.Status.Conditions = []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
			{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)},
		}
		return p
	case k < 16: // its node stopped reporting
		p.Status.Phase = v1.PodUnknown
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionUnknown, LastTransitionTime: metav1.NewTime(between(r, created, now))}}
	default:
		ready := v1.ConditionTrue
		if r.IntN(100) >= 92 {
			ready = v1.ConditionFalse
		}
		at := metav1.NewTime(between(r, created, now))
		p.Status.Conditions = []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
			{Type: v1.ContainersReady, Status: ready, LastTransitionTime: at},
			{Type: v1.PodReady, Status: ready, LastTransitionTime: at},
		}
	}
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", RestartCount: restarts(r)}}
	if r.IntN(2) == 0 {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "proxy"})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{Name: "proxy", RestartCount: restarts(r)})
	}
	if r.IntN(10) == 0 {
		p.Spec.InitContainers = []v1.Container{{Name: "log-shipper", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways)}}
		p.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "log-shipper", RestartCount: restarts(r)}}
	}
	if r.IntN(20) == 0 {
		p.Annotations = map[string]string{DeletionCostAnnotation: strconv.Itoa(r.IntN(2001) - 1000)}
	}
	return p
}

// retire makes p inactive: finished, or being deleted.
func retire(r *rand.Rand, p *v1.Pod, now time.Time) {
	switch r.IntN(3) {
	case 0:
		p.Status.Phase = v1.PodSucceeded
	case 1:
		p.Status.Phase = v1.PodFailed
	default:
		p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Duration(r.IntN(30)) * time.Second)))
	}
}

// restarts is a container's restart count: mostly none, a few, rarely many.
func restarts(r *rand.Rand) int32 {
	switch k := r.IntN(100); {
	case k < 80:
		return 0
	case k < 97:
		return int32(1 + r.IntN(3))
	default:
		return int32(4 + r.IntN(50))
	}
}

// logUniform draws a duration whose logarithm is uniform in [lo, hi).
func logUniform(r *rand.Rand, lo, hi time.Duration) time.Duration {
	l, h := math.Log(float64(lo)), math.Log(float64(hi))
	return time.Duration(math.Exp(l + r.Float64()*(h-l)))
}

// between draws a whole second in [a, b].
func between(r *rand.Rand, a, b time.Time) time.Time {
	secs := int64(b.Sub(a) / time.Second)
	if secs <= 0 {
		return a
	}
	return a.Add(time.Duration(r.Int64N(secs+1)) * time.Second)
}

// uuid is a random RFC 4122 version 4 string, as the API server assigns.
func uuid(r *rand.Rand) string {
	a, b := r.Uint64(), r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>48&0x3fff|0x8000, b&0xffffffffffff)
}
