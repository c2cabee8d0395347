package parity

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort" //nolint:depguard // the ReplicaSet orders are sort.Interface values; they are used through sort.Sort
	"strings"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/history"
	"github.com/ctrlkit/ctrlkit/podstate"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/controller"
	labelsutil "k8s.io/kubernetes/pkg/util/labels"
)

// genReplicaSets returns ReplicaSets whose sizes, creation times and names
// collide often, so every tie-breaker of the orders is reached.
func genReplicaSets(r *rand.Rand) []*appsv1.ReplicaSet {
	times := []metav1.Time{{}, metav1.NewTime(refNow), metav1.NewTime(refNow.Add(time.Second)), metav1.NewTime(refNow.Add(-time.Nanosecond))}
	var out []*appsv1.ReplicaSet
	for range r.IntN(9) {
		n := int32(r.IntN(4))
		out = append(out, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: oneOf(r, "a", "b", "c", "d"), CreationTimestamp: oneOf(r, times...)},
			Spec:       appsv1.ReplicaSetSpec{Replicas: &n},
		})
	}
	return out
}

func rsNames(rs []*appsv1.ReplicaSet) []string {
	out := make([]string, len(rs))
	for i, x := range rs {
		out[i] = fmt.Sprintf("%s/%d/%s", x.Name, *x.Spec.Replicas, timeString(x.CreationTimestamp))
	}
	return out
}

// TestParityRSHelpers compares the ReplicaSet filters and the three
// ReplicaSet orders with pkg/controller's. Both sides sort copies of the same
// slice with sort.Sort, upstream's own algorithm, so equal comparisons give
// the same permutation even among indistinguishable entries.
func TestParityRSHelpers(t *testing.T) {
	target[[]*appsv1.ReplicaSet]{
		name: "RSHelpers",
		gen:  genReplicaSets,
		check: func(in []*appsv1.ReplicaSet) string {
			if g, w := history.FilterActiveReplicaSets(in), controller.FilterActiveReplicaSets(in); !slices.Equal(g, w) {
				return fmt.Sprintf("FilterActiveReplicaSets = %v, upstream %v", rsNames(g), rsNames(w))
			}
			keep := func(rs *appsv1.ReplicaSet) bool { return rs.Name < "c" }
			if g, w := history.FilterReplicaSets(in, keep), controller.FilterReplicaSets(in, keep); !slices.Equal(g, w) {
				return fmt.Sprintf("FilterReplicaSets = %v, upstream %v", rsNames(g), rsNames(w))
			}
			orders := []struct {
				name         string
				ours, theirs func([]*appsv1.ReplicaSet) sort.Interface
			}{
				{"ByCreationTimestamp",
					func(s []*appsv1.ReplicaSet) sort.Interface { return history.ReplicaSetsByCreationTimestamp(s) },
					func(s []*appsv1.ReplicaSet) sort.Interface { return controller.ReplicaSetsByCreationTimestamp(s) }},
				{"BySizeOlder",
					func(s []*appsv1.ReplicaSet) sort.Interface { return history.ReplicaSetsBySizeOlder(s) },
					func(s []*appsv1.ReplicaSet) sort.Interface { return controller.ReplicaSetsBySizeOlder(s) }},
				{"BySizeNewer",
					func(s []*appsv1.ReplicaSet) sort.Interface { return history.ReplicaSetsBySizeNewer(s) },
					func(s []*appsv1.ReplicaSet) sort.Interface { return controller.ReplicaSetsBySizeNewer(s) }},
			}
			for _, o := range orders {
				a, b := slices.Clone(in), slices.Clone(in)
				sort.Sort(o.ours(a))
				sort.Sort(o.theirs(b))
				if !slices.Equal(a, b) {
					return fmt.Sprintf("ReplicaSets%s = %v, upstream %v", o.name, rsNames(a), rsNames(b))
				}
			}
			return ""
		},
		shrink:   removeEach[*appsv1.ReplicaSet],
		describe: func(in []*appsv1.ReplicaSet) string { return strings.Join(rsNames(in), " ") },
	}.run(t)
}

type labelCase struct {
	labels   map[string]string
	selector *metav1.LabelSelector
	key, val string
}

func genLabelCase(r *rand.Rand) labelCase {
	c := labelCase{key: oneOf(r, "", "k", "app", "h"), val: oneOf(r, "", "v", "x")}
	if r.IntN(4) > 0 {
		c.labels = map[string]string{}
		for range r.IntN(3) {
			c.labels[oneOf(r, "k", "app", "tier")] = oneOf(r, "", "v", "w")
		}
	}
	c.selector = &metav1.LabelSelector{}
	if r.IntN(3) > 0 {
		c.selector.MatchLabels = map[string]string{}
		for range r.IntN(3) {
			c.selector.MatchLabels[oneOf(r, "k", "app", "h")] = oneOf(r, "", "v")
		}
	}
	for range r.IntN(3) {
		req := metav1.LabelSelectorRequirement{Key: oneOf(r, "k", "tier"), Operator: oneOf(r, metav1.LabelSelectorOpIn, metav1.LabelSelectorOpExists)}
		switch r.IntN(3) {
		case 0:
			req.Values = []string{}
		case 1:
			req.Values = []string{"a", "b"}
		}
		c.selector.MatchExpressions = append(c.selector.MatchExpressions, req)
	}
	return c
}

// TestParityLabelHelpers compares history's label helpers with
// pkg/util/labels, including whether the input is copied or changed in place.
func TestParityLabelHelpers(t *testing.T) {
	target[labelCase]{
		name: "LabelHelpers",
		gen:  genLabelCase,
		check: func(c labelCase) string {
			type fn func(map[string]string, string, string) map[string]string
			for name, pair := range map[string][2]fn{
				"CloneAndAddLabel": {history.CloneAndAddLabel, labelsutil.CloneAndAddLabel},
				"AddLabel":         {history.AddLabel, labelsutil.AddLabel},
				"CloneAndRemoveLabel": {
					func(m map[string]string, k, _ string) map[string]string { return history.CloneAndRemoveLabel(m, k) },
					func(m map[string]string, k, _ string) map[string]string { return labelsutil.CloneAndRemoveLabel(m, k) }},
			} {
				inA, inB := cloneMap(c.labels), cloneMap(c.labels)
				g, w := pair[0](inA, c.key, c.val), pair[1](inB, c.key, c.val)
				if !reflect.DeepEqual(g, w) || !reflect.DeepEqual(inA, inB) || sameMap(g, inA) != sameMap(w, inB) {
					return fmt.Sprintf("%s = %v (input now %v), upstream %v (input now %v)", name, g, inA, w, inB)
				}
			}
			selA, selB := c.selector.DeepCopy(), c.selector.DeepCopy()
			g, w := history.CloneSelectorAndAddLabel(selA, c.key, c.val), labelsutil.CloneSelectorAndAddLabel(selB, c.key, c.val)
			if !reflect.DeepEqual(g, w) || (g == selA) != (w == selB) || !reflect.DeepEqual(selA, selB) {
				return fmt.Sprintf("CloneSelectorAndAddLabel = %+v, upstream %+v", g, w)
			}
			g, w = history.AddLabelToSelector(selA, c.key, c.val), labelsutil.AddLabelToSelector(selB, c.key, c.val)
			if !reflect.DeepEqual(g, w) || !reflect.DeepEqual(selA, selB) {
				return fmt.Sprintf("AddLabelToSelector = %+v, upstream %+v", g, w)
			}
			if a, b := history.SelectorHasLabel(c.selector, c.key), labelsutil.SelectorHasLabel(c.selector, c.key); a != b {
				return fmt.Sprintf("SelectorHasLabel = %v, upstream %v", a, b)
			}
			return ""
		},
		describe: func(c labelCase) string {
			return fmt.Sprintf("labels=%v selector=%+v key=%q value=%q", c.labels, c.selector, c.key, c.val)
		},
	}.run(t)
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sameMap reports whether a and b are the same map object.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

type conditionCase struct {
	pod  *v1.Pod
	cond v1.PodCondition
	name string
}

// TestParityPodConditionHelpers compares podstate's condition and
// container-status helpers with pkg/api/v1/pod's. UpdatePodCondition stamps
// the wall clock, so transition times at or after the call count as "now" on
// both sides; generated times are all earlier.
func TestParityPodConditionHelpers(t *testing.T) {
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	target[conditionCase]{
		name: "PodConditionHelpers",
		gen: func(r *rand.Rand) conditionCase {
			p := newPodGen(r, refNow, false).pod()
			for i := range p.Status.Conditions {
				p.Status.Conditions[i].LastTransitionTime = metav1.NewTime(past.Add(time.Duration(r.IntN(3)) * time.Hour))
				p.Status.Conditions[i].Reason = oneOf(r, "", "r")
			}
			return conditionCase{
				pod: p,
				cond: v1.PodCondition{Type: oneOf(r, condTyp...), Status: oneOf(r, condStat...), Reason: oneOf(r, "", "r"),
					Message: oneOf(r, "", "m"), LastProbeTime: oneOf(r, metav1.Time{}, metav1.NewTime(past))},
				name: fmt.Sprintf("c%d", r.IntN(3)),
			}
		},
		check: func(c conditionCase) string {
			st := c.pod.Status
			for _, typ := range append(slices.Clone(condTyp), v1.ContainersReady) {
				gi, gc := podstate.GetPodCondition(&st, typ)
				wi, wc := podutil.GetPodCondition(&st, typ)
				if gi != wi || gc != wc {
					return fmt.Sprintf("GetPodCondition(%s) = %d, upstream %d", typ, gi, wi)
				}
				gi, gc = podstate.GetPodConditionFromList(st.Conditions, typ)
				wi, wc = podutil.GetPodConditionFromList(st.Conditions, typ)
				if gi != wi || gc != wc {
					return fmt.Sprintf("GetPodConditionFromList(%s) = %d, upstream %d", typ, gi, wi)
				}
			}
			if gi, _ := podstate.GetPodCondition(nil, v1.PodReady); gi != -1 {
				return "GetPodCondition(nil) != -1"
			}
			if g, w := podstate.IsPodReadyConditionTrue(st), podutil.IsPodReadyConditionTrue(st); g != w {
				return fmt.Sprintf("IsPodReadyConditionTrue = %v, upstream %v", g, w)
			}
			for _, name := range []string{c.name, "i0", "e"} {
				if g, w := podstate.GetExistingContainerStatus(st.ContainerStatuses, name), podutil.GetExistingContainerStatus(st.ContainerStatuses, name); !reflect.DeepEqual(g, w) {
					return fmt.Sprintf("GetExistingContainerStatus(%s) = %+v, upstream %+v", name, g, w)
				}
				g, gok := podstate.GetContainerStatus(st.ContainerStatuses, name)
				w, wok := podutil.GetContainerStatus(st.ContainerStatuses, name)
				if gok != wok || !reflect.DeepEqual(g, w) {
					return fmt.Sprintf("GetContainerStatus(%s) = %v, upstream %v", name, gok, wok)
				}
			}

			start := time.Now()
			ours, theirs := c.pod.Status.DeepCopy(), c.pod.Status.DeepCopy()
			oc, tc := c.cond, c.cond
			gch := podstate.UpdatePodCondition(ours, &oc)
			wch := podutil.UpdatePodCondition(theirs, &tc)
			stampNow(ours.Conditions, start)
			stampNow(theirs.Conditions, start)
			stampNow([]v1.PodCondition{oc}, start)
			stampNow([]v1.PodCondition{tc}, start)
			if gch != wch || !reflect.DeepEqual(ours.Conditions, theirs.Conditions) {
				return fmt.Sprintf("UpdatePodCondition = %v %+v, upstream %v %+v", gch, ours.Conditions, wch, theirs.Conditions)
			}
			return ""
		},
		describe: func(c conditionCase) string {
			return fmt.Sprintf("conditions=%+v update=%+v name=%s", c.pod.Status.Conditions, c.cond, c.name)
		},
	}.run(t)
}

// stampNow replaces transition times at or after start by a fixed marker.
func stampNow(conds []v1.PodCondition, start time.Time) {
	for i := range conds {
		if !conds[i].LastTransitionTime.Time.Before(start) {
			conds[i].LastTransitionTime = metav1.NewTime(time.Unix(1, 0))
		}
	}
}
