package podset

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/podranking"
)

// namingKind is a Kind that names the pods to delete first.
type namingKind struct {
	Kind[*appsv1.ReplicaSet]
	names []string
}

func (k namingKind) ChildrenToDeleteFirst(*appsv1.ReplicaSet) []string { return k.names }

var _ ScaleInKind[*appsv1.ReplicaSet] = namingKind{}

// scaleDownNamed scales a ReplicaSet of five ready pods, a to e (a the most
// recently ready, which upstream's ranking deletes first), down to
// replicas, with names to delete first, and returns the pods deleted and
// the decision reported.
func scaleDownNamed(t *testing.T, replicas int32, names []string, opts ...Option) ([]string, ScaleDownDecision) {
	t.Helper()
	rs := newRS("foobar", replicas, fooBar)
	other := newRS("other", 1, fooBar)
	var decisions []ScaleDownDecision
	opts = append(opts, WithScaleDownReporter(func(d ScaleDownDecision) { decisions = append(decisions, d) }))
	e := newEnvWrapped(t, func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] { return namingKind{k, names} },
		[]runtime.Object{rs}, opts...)
	e.addOwner(rs)
	e.addOwner(other)
	// Listed in the reverse of the ranking's order, so an order that is
	// not the ranking's shows.
	for i, name := range slices.Backward([]string{"a", "b", "c", "d", "e"}) {
		e.addPods(readyPod(name, rs, time.Duration(1<<(2*i))*time.Minute, name))
	}
	e.addPods(readyPod("other-0", other, time.Second, "o"))
	require.NoError(t, e.sync(rs))
	require.Len(t, decisions, 1)
	deleted := slices.Clone(e.pc.DeletePodName)
	slices.Sort(deleted)
	return deleted, decisions[0]
}

func rules(d ScaleDownDecision) []podranking.Rule {
	out := make([]podranking.Rule, len(d.Reasons))
	for i, r := range d.Reasons {
		out[i] = r.Rule
	}
	return out
}

func TestScaleDownDeletesNamedPodsFirst(t *testing.T) {
	// Without names the ranking deletes a and b.
	deleted, d := scaleDownNamed(t, 3, nil)
	assert.Equal(t, []string{"a", "b"}, deleted)
	assert.NotContains(t, rules(d), podranking.RuleNamed)

	// Bad data is ignored: an empty name, one listed twice, one no pod
	// has, another owner's pod.
	deleted, d = scaleDownNamed(t, 3, []string{"", "e", "d", "e", "gone", "other-0"})
	assert.Equal(t, []string{"d", "e"}, deleted)
	assert.Equal(t, []string{"d", "e"}, podNames(d.Chosen), "among the named, the ranking's order")
	assert.Equal(t, []podranking.Rule{podranking.RuleNamed, podranking.RuleNamed}, rules(d))
	assert.Equal(t, "default/d", d.Reasons[0].A)
	assert.Equal(t, "default/a", d.Reasons[0].B, "the first pod kept")
	assert.True(t, d.Reasons[0].AFirst())
	assert.Equal(t, 5, d.Candidates)

	// Fewer named than to delete: the rest by the ranking.
	deleted, d = scaleDownNamed(t, 3, []string{"e"})
	assert.Equal(t, []string{"a", "e"}, deleted)
	assert.Equal(t, []string{"e", "a"}, podNames(d.Chosen))
	assert.Equal(t, []podranking.Rule{podranking.RuleNamed, podranking.RuleReadyTime}, rules(d))

	// More named than to delete: the ranking chooses among them, and
	// explains against the named pod kept.
	deleted, d = scaleDownNamed(t, 3, []string{"c", "d", "e"})
	assert.Equal(t, []string{"c", "d"}, deleted)
	assert.Equal(t, []podranking.Rule{podranking.RuleReadyTime, podranking.RuleReadyTime}, rules(d))
	assert.Equal(t, "default/e", d.Reasons[0].B)

	// The burst cap still applies.
	deleted, _ = scaleDownNamed(t, 3, []string{"d", "e"}, WithBurstReplicas(1))
	assert.Equal(t, []string{"d"}, deleted)

	// Names of no active pod: the ranking alone, as without names.
	deleted, _ = scaleDownNamed(t, 3, []string{"gone", "other-0"})
	assert.Equal(t, []string{"a", "b"}, deleted)
}

func TestScaleDownNamedWithoutReporter(t *testing.T) {
	rs := newRS("foobar", 3, fooBar)
	e := newEnvWrapped(t, func(k Kind[*appsv1.ReplicaSet]) Kind[*appsv1.ReplicaSet] { return namingKind{k, []string{"d", "e"}} },
		[]runtime.Object{rs})
	e.addOwner(rs)
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		e.addPods(readyPod(name, rs, time.Duration(1<<(2*i))*time.Minute, name))
	}
	require.NoError(t, e.sync(rs))
	assert.ElementsMatch(t, []string{"d", "e"}, e.pc.DeletePodName)
	// A lagging cache deletes nothing more.
	require.NoError(t, e.sync(rs))
	assert.Len(t, e.pc.DeletePodName, 2)
}
