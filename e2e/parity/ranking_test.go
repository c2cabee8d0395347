package parity

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/podranking"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	upstream "k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/features"
)

// rankCase is one ranking input: the pods to rank, their ranks, the
// reference time (zero or not), and for PodsToDelete the related pods and
// the number of pods to delete.
type rankCase struct {
	pods    []*v1.Pod
	rank    []int
	now     time.Time
	related []*v1.Pod
	diff    int
}

func (c rankCase) describe() string {
	var b strings.Builder
	now := "zero"
	if !c.now.IsZero() {
		now = c.now.Format(time.RFC3339Nano)
	}
	fmt.Fprintf(&b, "now=%s diff=%d (times below are relative to %s)\n", now, c.diff, refNow.Format(time.RFC3339Nano))
	for i, p := range c.pods {
		r := 0
		if i < len(c.rank) {
			r = c.rank[i]
		}
		fmt.Fprintf(&b, "  pod[%d] rank=%d %s\n", i, r, podString(p))
	}
	for _, p := range c.related {
		fmt.Fprintf(&b, "  related %s\n", podString(p))
	}
	return b.String()
}

// genRankCase generates pods with the rule inputs described in genpod_test.go.
// distinct makes every instant and UID of the case unique, so that upstream's
// comparator is a strict total order on it; otherwise instants and UIDs
// collide often, to reach ties and the equal-instant corner.
func genRankCase(r *rand.Rand, distinct bool, maxPods int) rankCase {
	c := rankCase{now: refNow}
	if r.IntN(5) == 0 {
		c.now = time.Time{}
	}
	g := newPodGen(r, refNow, distinct)
	n := r.IntN(maxPods + 1)
	if r.IntN(4) > 0 {
		n = r.IntN(min(maxPods, 16) + 1) // mostly small: more cases per second
	}
	for range n {
		c.pods = append(c.pods, g.pod())
	}
	for range n {
		c.rank = append(c.rank, oneOf(r, 0, 0, 1, 2, 3, r.IntN(100)))
	}
	// Related pods: some of the pods themselves plus strangers, active or not.
	for _, p := range c.pods {
		if r.IntN(2) == 0 {
			c.related = append(c.related, p)
		}
	}
	for range r.IntN(6) {
		c.related = append(c.related, g.pod())
	}
	c.diff = r.IntN(n + 2)
	return c
}

func upstreamRanks(c rankCase) upstream.ActivePodsWithRanks {
	return upstream.ActivePodsWithRanks{Pods: slices.Clone(c.pods), Rank: slices.Clone(c.rank), Now: metav1.NewTime(c.now)}
}

func ctrlkitRanks(c rankCase) podranking.ActivePodsWithRanks {
	return podranking.ActivePodsWithRanks{Pods: slices.Clone(c.pods), Rank: slices.Clone(c.rank), Now: metav1.NewTime(c.now)}
}

// upstreamRelatedRanks counts active related pods per node name, as the
// ReplicaSet controller's unexported getPodsRankedByRelatedPodsOnSameNode
// does (written here from its specification; upstream.IsPodActive is the
// real predicate).
func upstreamRelatedRanks(pods, related []*v1.Pod) []int {
	perNode := map[string]int{}
	for _, p := range related {
		if upstream.IsPodActive(p) {
			perNode[p.Spec.NodeName]++
		}
	}
	ranks := make([]int, len(pods))
	for i, p := range pods {
		ranks[i] = perNode[p.Spec.NodeName]
	}
	return ranks
}

// upstreamPodsToDelete is the ReplicaSet controller's getPodsToDelete:
// rank by related pods, sort.Sort with upstream's ActivePodsWithRanks when
// some pods stay, and take the first diff. The reference time is passed in
// instead of read from the clock, so both sides see the same Now.
func upstreamPodsToDelete(filtered, related []*v1.Pod, diff int, now time.Time) []*v1.Pod {
	pods := slices.Clone(filtered)
	if diff < len(pods) {
		s := upstream.ActivePodsWithRanks{Pods: pods, Rank: upstreamRelatedRanks(pods, related), Now: metav1.NewTime(now)}
		sort.Sort(s)
	}
	return pods[:min(diff, len(pods))]
}

func samePods(a, b []*v1.Pod) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func names(pods []*v1.Pod) string {
	s := make([]string, len(pods))
	for i, p := range pods {
		s[i] = p.Name
	}
	return "[" + strings.Join(s, " ") + "]"
}

// checkStrictOrder is the main ranking differential: on inputs with distinct
// instants and UIDs, ctrlkit's full order, its Select(diff) and
// Selector.PodsToDelete must equal upstream's sort.Sort(ActivePodsWithRanks)
// and sort-then-slice exactly, pod for pod and in order.
func checkStrictOrder(c rankCase) string {
	up := upstreamRanks(c)
	sort.Sort(up)
	for i := 1; i < len(up.Pods); i++ {
		if !up.Less(i-1, i) {
			return fmt.Sprintf("generator bug: upstream order not strict between %s and %s", up.Pods[i-1].Name, up.Pods[i].Name)
		}
	}
	ck := ctrlkitRanks(c)
	if got := ck.Sorted(); !samePods(got, up.Pods) {
		return fmt.Sprintf("Sorted = %s, upstream sort.Sort = %s", names(got), names(up.Pods))
	}
	for _, d := range []int{c.diff, len(c.pods) / 20, len(c.pods) / 2, 1, len(c.pods) - 1} {
		if d < 0 || d >= len(c.pods) {
			continue
		}
		if got := ck.Select(d); !samePods(got, up.Pods[:d]) {
			return fmt.Sprintf("Select(%d) = %s, upstream sort+slice = %s", d, names(got), names(up.Pods[:d]))
		}
	}
	// Ranks from related pods, then the whole PodsToDelete path.
	wantRanks := upstreamRelatedRanks(c.pods, c.related)
	gotRanks := podranking.RankByRelatedPodsOnSameNode(c.pods, c.related).Rank
	if !slices.Equal(gotRanks, wantRanks) {
		return fmt.Sprintf("RankByRelatedPodsOnSameNode ranks = %v, upstream counting = %v", gotRanks, wantRanks)
	}
	input := slices.Clone(c.pods)
	want := upstreamPodsToDelete(c.pods, c.related, c.diff, c.now)
	got := podranking.NewSelector(podranking.WithNow(c.now)).PodsToDelete(input, c.related, c.diff)
	if !samePods(got, want) {
		return fmt.Sprintf("PodsToDelete(diff=%d) = %s, upstream getPodsToDelete = %s", c.diff, names(got), names(want))
	}
	if !samePods(input, c.pods) {
		return "Selector.PodsToDelete reordered its input"
	}
	// The package-level PodsToDelete reads the real clock, as upstream's
	// getPodsToDelete does. Upstream is run with the instants just before and
	// just after ctrlkit's call; a bucket boundary can fall between them, so
	// agreeing with either is agreement. Every eighth case is enough: the
	// code path is the Selector's, checked above with a pinned Now.
	if len(c.pods)%8 == 0 {
		before := time.Now()
		got := podranking.PodsToDelete(input, c.related, c.diff)
		after := time.Now()
		if !samePods(got, upstreamPodsToDelete(c.pods, c.related, c.diff, before)) &&
			!samePods(got, upstreamPodsToDelete(c.pods, c.related, c.diff, after)) {
			return fmt.Sprintf("PodsToDelete(diff=%d) with the real clock = %s, upstream getPodsToDelete = %s",
				c.diff, names(got), names(upstreamPodsToDelete(c.pods, c.related, c.diff, after)))
		}
		if !samePods(input, c.pods) {
			return "PodsToDelete reordered its input"
		}
	}
	return ""
}

// checkCornerOrder runs on colliding inputs (ties, equal UIDs, equal
// instants). Upstream's order among tied pods is whatever pdqsort leaves, so
// the check is: ctrlkit's Less equals upstream's on every ordered pair, and
// ctrlkit's Sorted and Select orders never put a pod after one upstream says
// must follow it.
// checkPairwiseLess: ActivePodsWithRanks.Less is upstream's relation
// verbatim, so it must agree on every ordered pair of every input, the
// equal-instant corner included.
func checkPairwiseLess(c rankCase) string {
	up := upstreamRanks(c)
	ck := ctrlkitRanks(c)
	for i := range c.pods {
		for j := range c.pods {
			if i == j {
				continue
			}
			if u, k := up.Less(i, j), ck.Less(i, j); u != k {
				return fmt.Sprintf("Less(pod[%d], pod[%d]) = %v, upstream %v (%s)", i, j, k, u, ck.Explain(i, j))
			}
		}
	}
	return ""
}

// checkCornerOrder: ctrlkit's selection order (Sorted, Select) never puts a
// pod after one that upstream's Less puts before it.
func checkCornerOrder(c rankCase) string {
	up := upstreamRanks(c)
	ck := ctrlkitRanks(c)
	pos := map[*v1.Pod]int{}
	for i, p := range c.pods {
		pos[p] = i
	}
	upLess := func(a, b *v1.Pod) bool { return up.Less(pos[a], pos[b]) }
	sorted := ck.Sorted()
	for i := range sorted {
		for j := i + 1; j < len(sorted); j++ {
			if upLess(sorted[j], sorted[i]) {
				return fmt.Sprintf("Sorted puts %s before %s, upstream Less says the reverse", sorted[i].Name, sorted[j].Name)
			}
		}
	}
	if c.diff < len(c.pods) {
		chosen := ck.Select(c.diff)
		in := map[*v1.Pod]bool{}
		for _, p := range chosen {
			in[p] = true
		}
		for _, a := range chosen {
			for _, b := range c.pods {
				if !in[b] && upLess(b, a) {
					return fmt.Sprintf("Select(%d) chose %s but left %s, which upstream deletes first", c.diff, a.Name, b.Name)
				}
			}
		}
	}
	return ""
}

func shrinkRankCase(c rankCase) []rankCase {
	var out []rankCase
	for i := range c.pods {
		d := c
		d.pods = slices.Delete(slices.Clone(c.pods), i, i+1)
		d.rank = slices.Delete(slices.Clone(c.rank), i, i+1)
		d.diff = min(c.diff, len(d.pods))
		out = append(out, d)
	}
	if len(c.related) > 0 {
		for _, rel := range removeEach(c.related) {
			d := c
			d.related = rel
			out = append(out, d)
		}
	}
	for i := range c.rank {
		if c.rank[i] != 0 {
			d := c
			d.rank = slices.Clone(c.rank)
			d.rank[i] = 0
			out = append(out, d)
		}
	}
	for _, ps := range simplerPods(c.pods) {
		d := c
		d.pods = ps
		out = append(out, d)
	}
	return out
}

// TestParityRankingOrder: full order, Select and PodsToDelete on inputs with
// distinct instants and UIDs, exact equality with upstream.
func TestParityRankingOrder(t *testing.T) {
	target[rankCase]{
		name:  "RankingOrder",
		gen:   func(r *rand.Rand) rankCase { return genRankCase(r, true, 48) },
		check: checkStrictOrder,
		// Shrinking may merge instants (a field reset to zero); the domain
		// keeps candidates inside the distinct-instant space.
		domain:   strictDomain,
		shrink:   shrinkRankCase,
		describe: rankCase.describe,
	}.run(t)
}

// strictDomain reports whether c has distinct UIDs and distinct instants in
// the sense the generator guarantees: no two pods share a UID, a creation
// time, or (both being ready) a ready time, the zero time included.
func strictDomain(c rankCase) bool {
	uids := map[string]bool{}
	created := map[int64]bool{}
	ready := map[int64]bool{}
	zeroCreated, zeroReady := false, false
	for _, p := range c.pods {
		if uids[string(p.UID)] {
			return false
		}
		uids[string(p.UID)] = true
		if p.CreationTimestamp.IsZero() {
			if zeroCreated {
				return false
			}
			zeroCreated = true
		} else {
			k := p.CreationTimestamp.UnixNano()
			if created[k] {
				return false
			}
			created[k] = true
		}
		if podReady(p) {
			t := readyTime(p)
			if t.IsZero() {
				if zeroReady {
					return false
				}
				zeroReady = true
			} else {
				if ready[t.UnixNano()] {
					return false
				}
				ready[t.UnixNano()] = true
			}
		}
	}
	return true
}

func podReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func readyTime(p *v1.Pod) metav1.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
			return c.LastTransitionTime
		}
	}
	return metav1.Time{}
}

// TestParityRankingCornerLess: colliding instants and UIDs, pairwise Less on
// every input; nothing is skipped.
func TestParityRankingCornerLess(t *testing.T) {
	target[rankCase]{
		name:     "RankingCornerLess",
		gen:      func(r *rand.Rand) rankCase { return genRankCase(r, false, 8) },
		check:    checkPairwiseLess,
		shrink:   shrinkRankCase,
		describe: rankCase.describe,
	}.run(t)
}

// TestParityRankingCorner: colliding instants and UIDs, ctrlkit's selection
// order against upstream's Less. Skips exactly the inputs
// podranking.HasEqualInstantTie reports, the one documented difference of
// that order.
func TestParityRankingCorner(t *testing.T) {
	target[rankCase]{
		name:  "RankingCorner",
		gen:   func(r *rand.Rand) rankCase { return genRankCase(r, false, 8) },
		check: checkCornerOrder,
		skip: func(c rankCase) (string, bool) {
			return "podranking.HasEqualInstantTie", ctrlkitRanks(c).HasEqualInstantTie()
		},
		shrink:   shrinkRankCase,
		describe: rankCase.describe,
	}.run(t)
}

// TestParityRankingNoDeletionCost compares pairwise Less with the
// PodDeletionCost feature gate off upstream and DisableDeletionCost in
// ctrlkit. (LogarithmicScaleDown is GA and locked on upstream, so its off
// switch has no upstream counterpart to compare with.)
func TestParityRankingNoDeletionCost(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.PodDeletionCost, false)
	target[rankCase]{
		name: "RankingNoDeletionCost",
		gen: func(r *rand.Rand) rankCase {
			g := newPodGen(r, refNow, false)
			c := rankCase{now: refNow, pods: []*v1.Pod{g.pod(), g.pod()}, rank: []int{r.IntN(3), r.IntN(3)}}
			if r.IntN(5) == 0 {
				c.now = time.Time{}
			}
			return c
		},
		check: func(c rankCase) string {
			if len(c.pods) < 2 {
				return ""
			}
			up := upstreamRanks(c)
			ck := ctrlkitRanks(c)
			ck.DisableDeletionCost = true
			for _, ij := range [][2]int{{0, 1}, {1, 0}} {
				if u, k := up.Less(ij[0], ij[1]), ck.Less(ij[0], ij[1]); u != k {
					return fmt.Sprintf("Less(%d, %d) = %v, upstream (PodDeletionCost off) %v", ij[0], ij[1], k, u)
				}
			}
			return ""
		},
		shrink:   shrinkRankCase,
		describe: rankCase.describe,
	}.run(t)
}
