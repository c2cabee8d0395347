package parity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const costKey = "controller.kubernetes.io/pod-deletion-cost"

// refNow is the reference instant the generated times hang from. It is a
// fixed date rather than time.Now so that a failing case replays exactly.
var refNow = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

// instants hands out the timestamps of one case. In distinct mode every
// instant it returns is new for the case (the zero time at most once), which
// is what makes upstream's comparator a strict total order on the case. In
// colliding mode it reuses earlier instants often, to reach the corners.
type instants struct {
	r         *rand.Rand
	now       time.Time
	distinct  bool
	used      map[int64]bool
	zeroUsed  bool
	history   []metav1.Time
	collideP  float64
	zeroShare float64
}

func newInstants(r *rand.Rand, now time.Time, distinct bool) *instants {
	return &instants{r: r, now: now, distinct: distinct, used: map[int64]bool{}, collideP: 0.4, zeroShare: 0.08}
}

// next returns a timestamp spread over every log2 bucket of age the ranking
// reads: future times (bucket -1), sub-second ages, exact powers of two and
// their neighbours, and ages above 2^53 ns where float64 rounding decides
// the bucket.
func (in *instants) next() metav1.Time {
	if !in.distinct && len(in.history) > 0 && in.r.Float64() < in.collideP {
		return in.history[in.r.IntN(len(in.history))]
	}
	for {
		t := in.draw()
		if in.distinct {
			if t.IsZero() {
				if in.zeroUsed {
					continue
				}
				in.zeroUsed = true
			} else {
				k := t.UnixNano()
				if in.used[k] {
					continue
				}
				in.used[k] = true
			}
		}
		in.history = append(in.history, t)
		return t
	}
}

func (in *instants) draw() metav1.Time {
	r := in.r
	if r.Float64() < in.zeroShare {
		return metav1.Time{}
	}
	var age time.Duration
	switch r.IntN(6) {
	case 0: // uniform inside a random power-of-two bucket
		k := r.IntN(62)
		age = time.Duration(int64(1)<<k + r.Int64N(int64(1)<<k))
	case 1: // bucket edges: 2^k - 1, 2^k, 2^k + 1
		k := 1 + r.IntN(61)
		age = time.Duration(int64(1)<<k + int64(r.IntN(3)-1))
	case 2: // whole seconds, as the API server stores them
		age = time.Duration(r.Int64N(3*365*24*3600)) * time.Second
	case 3: // the future: bucket -1 (and age 0)
		age = -time.Duration(r.Int64N(int64(48 * time.Hour)))
	case 4: // above 2^53 ns: float64 rounding territory
		k := 53 + r.IntN(9)
		age = time.Duration(int64(1)<<k - r.Int64N(1<<12))
	default: // near the reference instant
		age = time.Duration(r.Int64N(int64(10 * time.Second)))
	}
	return metav1.NewTime(in.now.Add(-age))
}

var costValues = []string{
	"0", "1", "-1", "10", "100", "-100", "2147483647", "-2147483648",
	"2147483648", "-2147483649", "", "+10", "008", " 5", "5 ", "-0", "-08",
	"10Mi", "-", "abc", "0x10", "1e3", "1_000", "٣", "00", "+0", "9223372036854775808",
}

// costString returns a deletion-cost annotation value: mostly from the
// table of edge cases above, sometimes a random int32, sometimes junk.
func costString(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return fmt.Sprint(int32(r.Uint32()))
	case 1:
		const alphabet = "-+0123456789 aMi_x."
		n := r.IntN(6)
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	case 2:
		return fmt.Sprint(r.IntN(7) - 3)
	default:
		return costValues[r.IntN(len(costValues))]
	}
}

var (
	phases   = []v1.PodPhase{v1.PodPending, v1.PodUnknown, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, "", "Weird"}
	nodes    = []string{"", "node-a", "node-b", "node-c"}
	condTyp  = []v1.PodConditionType{v1.PodReady, v1.PodReady, v1.ContainersReady, v1.PodScheduled}
	condStat = []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionUnknown}
	always   = v1.ContainerRestartPolicyAlways
	onFail   = v1.ContainerRestartPolicy("OnFailure")
)

// podGen generates pods over every field the pod predicates and the ranking
// read: node name, phase, conditions (several Ready ones, the first wins),
// their transition times, the deletion-cost annotation, container and
// init-container restarts with and without restartable sidecars, creation
// time and UID.
type podGen struct {
	r        *rand.Rand
	times    *instants
	distinct bool
	uids     map[types.UID]bool
	seq      int
}

func newPodGen(r *rand.Rand, now time.Time, distinct bool) *podGen {
	return &podGen{r: r, times: newInstants(r, now, distinct), distinct: distinct, uids: map[types.UID]bool{}}
}

func (g *podGen) uid() types.UID {
	r := g.r
	if !g.distinct {
		return types.UID(oneOf(r, "", "a", "b", "c", "uid-0", "uid-1"))
	}
	for {
		u := types.UID(fmt.Sprintf("%08x-%04x", r.Uint32(), r.Uint32()&0xffff))
		if r.IntN(20) == 0 {
			u = "" // the empty UID, at most once
		}
		if !g.uids[u] {
			g.uids[u] = true
			return u
		}
	}
}

func (g *podGen) pod() *v1.Pod {
	r := g.r
	g.seq++
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              fmt.Sprintf("pod-%d", g.seq),
			Namespace:         "default",
			UID:               g.uid(),
			CreationTimestamp: g.times.next(),
		},
		Spec:   v1.PodSpec{NodeName: oneOf(r, nodes...)},
		Status: v1.PodStatus{Phase: oneOf(r, phases...)},
	}
	if r.IntN(3) > 0 {
		p.Annotations = map[string]string{costKey: costString(r)}
		if r.IntN(4) == 0 {
			p.Annotations["other"] = "x"
		}
	} else if r.IntN(4) == 0 {
		p.Annotations = map[string]string{"unrelated": "1"}
	}
	for range r.IntN(4) {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
			Type:               oneOf(r, condTyp...),
			Status:             oneOf(r, condStat...),
			LastTransitionTime: g.times.next(),
		})
	}
	for i := range r.IntN(3) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{
			Name: fmt.Sprintf("c%d", i), RestartCount: restarts(r),
		})
	}
	for i := range r.IntN(3) {
		c := v1.Container{Name: fmt.Sprintf("i%d", i)}
		switch r.IntN(3) {
		case 0:
			c.RestartPolicy = &always
		case 1:
			c.RestartPolicy = &onFail
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	for range r.IntN(3) {
		// names i0..i3: some match a declared init container, some do not
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, v1.ContainerStatus{
			Name: fmt.Sprintf("i%d", r.IntN(4)), RestartCount: restarts(r),
		})
	}
	if r.IntN(10) == 0 {
		p.Status.EphemeralContainerStatuses = []v1.ContainerStatus{{Name: "e", RestartCount: restarts(r)}}
	}
	if r.IntN(12) == 0 {
		ts := metav1.NewTime(refNow)
		p.DeletionTimestamp = &ts
	}
	return p
}

func restarts(r *rand.Rand) int32 {
	switch r.IntN(5) {
	case 0:
		return 0
	case 1:
		return math.MaxInt32
	default:
		return int32(r.IntN(4))
	}
}

// podString renders the fields of a pod that the predicates and rules read,
// on one line, for failure messages.
func podString(p *v1.Pod) string {
	if p == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s uid=%q node=%q phase=%q created=%s", p.Name, p.UID, p.Spec.NodeName, p.Status.Phase, timeString(p.CreationTimestamp))
	if p.DeletionTimestamp != nil {
		b.WriteString(" deleting")
	}
	if v, ok := p.Annotations[costKey]; ok {
		fmt.Fprintf(&b, " cost=%q", v)
	}
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, " cond{%s=%s@%s}", c.Type, c.Status, timeString(c.LastTransitionTime))
	}
	for _, c := range p.Status.ContainerStatuses {
		fmt.Fprintf(&b, " cs{%s:%d}", c.Name, c.RestartCount)
	}
	for _, c := range p.Spec.InitContainers {
		pol := "nil"
		if c.RestartPolicy != nil {
			pol = string(*c.RestartPolicy)
		}
		fmt.Fprintf(&b, " init{%s:%s}", c.Name, pol)
	}
	for _, c := range p.Status.InitContainerStatuses {
		fmt.Fprintf(&b, " ics{%s:%d}", c.Name, c.RestartCount)
	}
	return b.String()
}

func timeString(t metav1.Time) string {
	if t.IsZero() {
		return "zero"
	}
	return fmt.Sprintf("now-%dns", refNow.Sub(t.Time).Nanoseconds())
}

// simplerPods returns variants of pods with one pod's field reset to its
// zero value, for shrinking: each variant removes one piece of complexity.
func simplerPods(pods []*v1.Pod) [][]*v1.Pod {
	var out [][]*v1.Pod
	for i, p := range pods {
		for _, f := range podSimplifiers {
			q := p.DeepCopy()
			if !f(q) {
				continue
			}
			c := append([]*v1.Pod(nil), pods...)
			c[i] = q
			out = append(out, c)
		}
	}
	return out
}

// podSimplifiers each clear one field and report whether there was anything
// to clear.
var podSimplifiers = []func(*v1.Pod) bool{
	func(p *v1.Pod) bool { ok := p.Annotations != nil; p.Annotations = nil; return ok },
	func(p *v1.Pod) bool { ok := p.Spec.NodeName != ""; p.Spec.NodeName = ""; return ok },
	func(p *v1.Pod) bool { ok := p.Status.Phase != ""; p.Status.Phase = ""; return ok },
	func(p *v1.Pod) bool {
		ok := len(p.Status.Conditions) > 0
		if ok {
			p.Status.Conditions = p.Status.Conditions[:len(p.Status.Conditions)-1]
		}
		return ok
	},
	func(p *v1.Pod) bool {
		ok := len(p.Status.ContainerStatuses)+len(p.Status.InitContainerStatuses)+len(p.Spec.InitContainers)+len(p.Status.EphemeralContainerStatuses) > 0
		p.Status.ContainerStatuses, p.Status.InitContainerStatuses, p.Spec.InitContainers, p.Status.EphemeralContainerStatuses = nil, nil, nil, nil
		return ok
	},
	func(p *v1.Pod) bool {
		ok := !p.CreationTimestamp.IsZero()
		p.CreationTimestamp = metav1.Time{}
		return ok
	},
	func(p *v1.Pod) bool { ok := p.DeletionTimestamp != nil; p.DeletionTimestamp = nil; return ok },
}

// prodShape describes one production-like ReplicaSet at scale-down time.
type prodShape struct {
	n        int           // pods
	nodes    int           // distinct node names
	rollout  time.Duration // creation spread of one rollout; 0 spreads creations over a month
	rollouts int           // rollouts (scale-ups) the pods came from
	costs    bool          // a few pods carry a deletion cost
}

// productionPods builds the pods of one ReplicaSet as an API server returns
// them: whole-second timestamps, random UIDs, mostly Running and Ready, the
// deletion-cost annotation on few pods if any, pods on a handful of nodes.
// With a rollout duration the pods come from rollouts of that length: slow
// start creates them in batches, so dozens share a creation second, and pods
// of one batch often become ready in the same second too. Without one, each
// pod is created at its own random second of the last month.
func productionPods(r *rand.Rand, now time.Time, s prodShape) []*v1.Pod {
	now = now.Truncate(time.Second)
	pods := make([]*v1.Pod, 0, s.n)
	starts := make([]time.Time, max(s.rollouts, 1))
	for i := range starts {
		// Rollouts started minutes to a month ago.
		starts[i] = now.Add(-time.Duration(60+r.Int64N(30*24*3600)) * time.Second)
	}
	startup := time.Duration(2+r.IntN(30)) * time.Second // typical time to ready for this workload
	for i := range s.n {
		var created time.Time
		if s.rollout > 0 {
			start := starts[r.IntN(len(starts))]
			// Slow-start batches 1, 2, 4, ... land in ever fewer seconds of
			// the rollout: pick a second, favouring the later, fuller ones.
			secs := max(int64(s.rollout/time.Second), 1)
			off := secs - 1 - int64(float64(secs)*r.Float64()*r.Float64())
			created = start.Add(time.Duration(off) * time.Second)
		} else {
			created = now.Add(-time.Duration(1+r.Int64N(30*24*3600)) * time.Second)
		}
		if created.After(now) {
			created = now
		}
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:              fmt.Sprintf("rs-%d", i),
				Namespace:         "default",
				UID:               types.UID(uuid(r)),
				CreationTimestamp: metav1.NewTime(created),
			},
			Spec:   v1.PodSpec{NodeName: fmt.Sprintf("node-%d", r.IntN(max(s.nodes, 1)))},
			Status: v1.PodStatus{Phase: v1.PodRunning},
		}
		ready := created.Add(startup)
		if r.IntN(3) == 0 {
			ready = ready.Add(time.Duration(r.IntN(4)) * time.Second)
		}
		if ready.After(now) {
			ready = now
		}
		switch k := r.IntN(100); {
		case k < 2: // not scheduled yet
			p.Spec.NodeName = ""
			p.Status.Phase = v1.PodPending
		case k < 4: // scheduled, pulling images
			p.Status.Phase = v1.PodPending
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)}}
		case k < 9: // running, failing its readiness probe
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(ready)}}
		case k < 10: // node lost
			p.Status.Phase = v1.PodUnknown
		default:
			p.Status.Conditions = []v1.PodCondition{
				{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)},
				{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)},
			}
		}
		restarts := int32(0)
		if r.IntN(10) == 0 {
			restarts = int32(1 + r.IntN(3))
		}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", RestartCount: restarts}}
		if s.costs && r.IntN(20) == 0 {
			p.Annotations = map[string]string{costKey: oneOf(r, "-100", "-1", "0", "10", "1000")}
		}
		pods = append(pods, p)
	}
	return pods
}

// uuid returns a random RFC 4122 version 4 string, as the API server assigns.
func uuid(r *rand.Rand) string {
	a, b := r.Uint64(), r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>48&0x3fff|0x8000, b&0xffffffffffff)
}
