package podranking

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExplain(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	base := func(name string) *v1.Pod {
		return fixture(name, "node", v1.PodRunning, true, 0, 0, at(time.Hour), at(48*time.Hour), nil)
	}
	mod := func(name string, f func(*v1.Pod)) *v1.Pod { p := base(name); f(p); return p }

	tests := []struct {
		name       string
		a, b       *v1.Pod
		ra, rb     int
		rule       Rule
		order      int
		aVal, bVal string
		contains   string
	}{
		{"assignment", mod("a", func(p *v1.Pod) { p.Spec.NodeName = "" }), base("b"), 0, 0, RuleAssignment, -1, "unassigned", "node node", "default/a before default/b: unassigned first"},
		{"phase", base("a"), mod("b", func(p *v1.Pod) { p.Status.Phase = v1.PodUnknown }), 0, 0, RulePhase, 1, "Running (ordinal 2)", "Unknown (ordinal 1)", "default/b before default/a: earlier phase first"},
		{"readiness", mod("a", func(p *v1.Pod) { p.Status.Conditions = nil }), base("b"), 0, 0, RuleReadiness, -1, "not ready", "ready", "not-ready first"},
		{"cost", mod("a", func(p *v1.Pod) { p.Annotations = map[string]string{DeletionCostAnnotation: "100"} }), mod("b", func(p *v1.Pod) { p.Annotations = map[string]string{DeletionCostAnnotation: "-3"} }), 0, 0, RuleDeletionCost, 1, "100", "-3", "(-3 vs 100)"},
		{"rank", base("a"), base("b"), 3, 1, RuleRank, -1, "3", "1", "more co-located pods first (3 vs 1)"},
		{"ready time buckets", mod("a", func(p *v1.Pod) { p.Status.Conditions[0].LastTransitionTime = at(time.Minute) }), base("b"), 0, 0, RuleReadyTime, -1, "", "", "log2 age buckets 35 vs 41"},
		{"ready time UID", mod("a", func(p *v1.Pod) { p.UID = "z"; p.Status.Conditions[0].LastTransitionTime = at(70 * time.Minute) }), mod("b", func(p *v1.Pod) { p.UID = "y" }), 0, 0, RuleReadyTime, 1, "", "", `ready instants differ within log2 bucket 41: smaller UID first ("z" vs "y")`},
		{"restarts", base("a"), mod("b", func(p *v1.Pod) { p.Status.InitContainerStatuses[0].RestartCount = 2 }), 0, 0, RuleRestarts, 1, "regular 0, sidecar 0", "regular 0, sidecar 2", "more restarts first"},
		{"creation", base("a"), mod("b", func(p *v1.Pod) { p.CreationTimestamp = metav1.Time{} }), 0, 0, RuleCreationTime, 1, "2026-05-30T00:00:00Z", "zero time", "a zero time goes first"},
		{"equivalent", base("a"), base("b"), 0, 0, RuleNone, 0, "", "", "equivalent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ActivePodsWithRanks{Pods: []*v1.Pod{tt.a, tt.b}, Rank: []int{tt.ra, tt.rb}, Now: metav1.NewTime(now)}
			d := s.Explain(0, 1)
			assert.Equal(t, tt.rule, d.Rule)
			assert.Equal(t, tt.order, d.Order)
			assert.Equal(t, tt.order, s.Compare(0, 1), "Explain and Compare agree")
			if tt.aVal != "" || tt.bVal != "" {
				assert.Equal(t, tt.aVal, d.AValue)
				assert.Equal(t, tt.bVal, d.BValue)
			}
			assert.Contains(t, d.String(), tt.contains)
			// The mirrored question gets the mirrored answer.
			m := s.Explain(1, 0)
			assert.Equal(t, d.Rule, m.Rule)
			assert.Equal(t, -d.Order, m.Order)
		})
	}
}

func TestExplainPlainTimes(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	a := fixture("a", "n", v1.PodRunning, true, 0, 0, metav1.NewTime(now.Add(-time.Hour)), metav1.Time{}, nil)
	b := fixture("b", "n", v1.PodRunning, true, 0, 0, metav1.NewTime(now.Add(-2*time.Hour)), metav1.Time{}, nil)
	d := ActivePodsWithRanks{Pods: []*v1.Pod{a, b}, Rank: []int{0, 0}}.Explain(0, 1)
	assert.Equal(t, RuleReadyTime, d.Rule)
	assert.True(t, d.AFirst())
	assert.Contains(t, d.String(), "plain comparison, more recent first")
	assert.Contains(t, d.AValue, "2026-05-31T23:00:00Z")
}
