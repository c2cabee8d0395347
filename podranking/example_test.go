package podranking_test

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/podranking"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// pod builds a running pod on node; readyFor < 0 means not ready.
func pod(name, node string, readyFor time.Duration, cost string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(now.Add(-24 * time.Hour)),
		},
		Spec:   v1.PodSpec{NodeName: node},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
	if readyFor >= 0 {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-readyFor))}}
	}
	if cost != "" {
		p.Annotations = map[string]string{podranking.DeletionCostAnnotation: cost}
	}
	return p
}

func podNames(pods []*v1.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.Name)
	}
	return strings.Join(s, ", ")
}

func ExamplePodsToDelete() {
	pods := []*v1.Pod{
		pod("web-a", "node-1", time.Hour, ""),
		pod("web-b", "node-2", -1, ""),          // not ready
		pod("web-c", "node-3", time.Hour, "-5"), // cheap to delete
		pod("web-d", "node-4", 10*time.Minute, ""),
	}
	// PodsToDelete uses the current time; a Selector can pin it.
	sel := podranking.NewSelector(podranking.WithNow(now))
	fmt.Println(podNames(sel.PodsToDelete(pods, pods, 2)))
	fmt.Println(podNames(pods), "(input untouched)")
	// Output:
	// web-b, web-c
	// web-a, web-b, web-c, web-d (input untouched)
}

func ExampleDecision() {
	kept := pod("web-a", "node-1", 48*time.Hour, "")
	young := pod("web-d", "node-1", 10*time.Minute, "")
	pods := []*v1.Pod{kept, young}
	sel := podranking.NewSelector(podranking.WithNow(now))
	deleted := sel.PodsToDelete(pods, pods, 1)[0]
	fmt.Println(sel.Explain(pods, pods, deleted, kept))
	// Output:
	// default/web-d before default/web-a: more recently ready first (2026-01-01T11:50:00Z vs 2025-12-30T12:00:00Z); log2 age buckets 39 vs 47, younger bucket first
}

func ExampleZoneSpread() {
	zones := map[string]string{"n1": "zone-a", "n2": "zone-a", "n3": "zone-a", "n4": "zone-b", "n5": "zone-c"}
	pods := []*v1.Pod{
		pod("a1", "n1", time.Minute, ""), pod("a2", "n2", 2*time.Minute, ""), pod("a3", "n3", 3*time.Minute, ""),
		pod("b1", "n4", time.Hour, ""), pod("c1", "n5", time.Hour, ""),
	}
	sel := podranking.NewSelector(
		podranking.WithNow(now),
		podranking.WithRankersFirst(podranking.ZoneSpread(func(node string) string { return zones[node] })),
	)
	// zone-a holds three pods, the others one each: both deletions come
	// from zone-a, which then matches the other zones.
	fmt.Println(podNames(sel.PodsToDelete(pods, pods, 2)))
	// Output: a1, a2
}

func ExampleActivePodsWithRanks() {
	pods := []*v1.Pod{pod("old", "n1", 48*time.Hour, ""), pod("new", "n1", time.Minute, "")}
	s := podranking.ActivePodsWithRanks{Pods: pods, Rank: []int{1, 1}, Now: metav1.NewTime(now)}
	fmt.Println(podNames(s.Sorted()), "|", s.Explain(0, 1).Rule)
	// Output: new, old | more recently ready first
}

func ExampleDeletionCost() {
	for _, v := range []string{"10", "-3", "008", "+1"} {
		c, err := podranking.DeletionCost(map[string]string{podranking.DeletionCostAnnotation: v})
		fmt.Println(v, c, err != nil)
	}
	// Output:
	// 10 10 false
	// -3 -3 false
	// 008 0 true
	// +1 0 true
}

func ExampleSelector_Rank() {
	pods := []*v1.Pod{
		pod("web-a", "node-1", time.Hour, ""),
		pod("web-b", "node-1", -1, ""), // not ready
		pod("web-c", "node-1", 10*time.Minute, ""),
	}
	// One ranking serves the choice and the explanation of every victim.
	rk := podranking.NewSelector(podranking.WithNow(now)).Rank(pods, pods)
	victims := rk.PodsToDelete(2)
	survivor := rk.Order()[len(victims)]
	for _, v := range victims {
		fmt.Println(rk.Explain(v, survivor).Rule)
	}
	// Output:
	// not-ready first
	// more recently ready first
}

func ExampleSelector_PodsToDeleteMemo() {
	pods := []*v1.Pod{
		pod("web-a", "node-1", time.Hour, ""),
		pod("web-b", "node-1", time.Hour, ""),
		pod("web-c", "node-2", 10*time.Minute, ""),
	}
	sel := podranking.NewSelector(podranking.WithNow(now))
	// One Memo per owner, kept from one scale-down to the next: the second
	// call reads only the pod that the informer replaced. node-1 runs two
	// of the pods, so one of them goes first, until web-c is not ready.
	memo := podranking.NewMemo()
	fmt.Println(podNames(sel.PodsToDeleteMemo(memo, pods, pods, 1)))
	pods[2] = pod("web-c", "node-2", -1, "") // no longer ready: a new object
	fmt.Println(podNames(sel.PodsToDeleteMemo(memo, pods, pods, 1)))
	// Output:
	// web-a
	// web-c
}
