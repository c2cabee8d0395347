package parity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/podstate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

// TestParityIsReady compares podstate.IsReady and ReadyCondition with
// pkg/api/v1/pod.IsPodReady and GetPodReadyCondition.
func TestParityIsReady(t *testing.T) {
	target[*v1.Pod]{
		name: "IsReady",
		gen: func(r *rand.Rand) *v1.Pod {
			return newPodGen(r, refNow, false).pod()
		},
		check: func(p *v1.Pod) string {
			if got, want := podstate.IsReady(p), podutil.IsPodReady(p); got != want {
				return fmt.Sprintf("IsReady = %v, upstream IsPodReady = %v", got, want)
			}
			got, want := podstate.ReadyCondition(p.Status), podutil.GetPodReadyCondition(p.Status)
			if (got == nil) != (want == nil) || (got != nil && *got != *want) {
				return fmt.Sprintf("ReadyCondition = %v, upstream GetPodReadyCondition = %v", got, want)
			}
			return ""
		},
		shrink:   func(p *v1.Pod) []*v1.Pod { return firstOfEach(simplerPods([]*v1.Pod{p})) },
		describe: podString,
	}.run(t)
}

type availCase struct {
	pod        *v1.Pod
	minReady   int32
	now        time.Time
	readySince time.Duration // for the message only
}

// TestParityIsAvailable compares podstate.IsAvailable with
// pkg/api/v1/pod.IsPodAvailable, concentrating on the minReadySeconds
// boundary (ready exactly minReadySeconds ago, a nanosecond either side) and
// on zero transition times.
func TestParityIsAvailable(t *testing.T) {
	target[availCase]{
		name: "IsAvailable",
		gen: func(r *rand.Rand) availCase {
			p := newPodGen(r, refNow, false).pod()
			c := availCase{pod: p, now: refNow}
			switch r.IntN(6) {
			case 0:
				c.minReady = 0
			case 1:
				c.minReady = oneOf(r, int32(-1), math.MaxInt32, math.MinInt32)
			default:
				c.minReady = int32(r.IntN(4000))
			}
			// Put the first Ready condition near the boundary now-minReady.
			if r.IntN(3) > 0 {
				boundary := c.now.Add(-time.Duration(c.minReady) * time.Second)
				off := oneOf(r, time.Duration(0), time.Nanosecond, -time.Nanosecond, time.Second, -time.Second, time.Duration(r.Int64N(int64(time.Hour)))-30*time.Minute)
				cond := v1.PodCondition{Type: v1.PodReady, Status: oneOf(r, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse), LastTransitionTime: metav1.NewTime(boundary.Add(off))}
				if r.IntN(8) == 0 {
					cond.LastTransitionTime = metav1.Time{}
				}
				p.Status.Conditions = append([]v1.PodCondition{cond}, p.Status.Conditions...)
				c.readySince = off
			}
			return c
		},
		check: func(c availCase) string {
			got := podstate.IsAvailable(c.pod, c.minReady, c.now)
			want := podutil.IsPodAvailable(c.pod, c.minReady, metav1.NewTime(c.now))
			if got != want {
				return fmt.Sprintf("IsAvailable(minReadySeconds=%d) = %v, upstream IsPodAvailable = %v", c.minReady, got, want)
			}
			return ""
		},
		shrink: func(c availCase) []availCase {
			var out []availCase
			for _, ps := range simplerPods([]*v1.Pod{c.pod}) {
				d := c
				d.pod = ps[0]
				out = append(out, d)
			}
			return out
		},
		describe: func(c availCase) string {
			return fmt.Sprintf("minReadySeconds=%d now=%s\npod: %s", c.minReady, c.now.Format(time.RFC3339Nano), podString(c.pod))
		},
	}.run(t)
}

// firstOfEach unwraps single-element candidate slices.
func firstOfEach(cands [][]*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(cands))
	for _, c := range cands {
		out = append(out, c[0])
	}
	return out
}
