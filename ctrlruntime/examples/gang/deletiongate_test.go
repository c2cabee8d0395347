package gang_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/gang"
)

const handOverLabel = "examples.ctrlkit.io/hand-over"

// marked names the pods the gate holds, sorted.
func (f fixture) marked(t *testing.T) []string {
	t.Helper()
	var out []string
	for name, p := range f.list(t) {
		if p.Labels[handOverLabel] == childset.DeletionGatePending {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// release clears the gate's label of the named pod, as whatever hands its
// work over would.
func (f fixture) release(t *testing.T, name string) {
	t.Helper()
	p := f.list(t)[name]
	require.NotNil(t, p, name)
	delete(p.Labels, handOverLabel)
	require.NoError(t, f.c.Update(context.Background(), p))
}

// spec.lifecycle.preDelete holds a Gang's deletions, a scale-in's and a
// replacement's alike: the highest index is marked and kept, its index
// held, until its label is cleared.
func TestGangPreDeleteHoldsScaleInAndReplacement(t *testing.T) {
	f := newFixture(t, 3)
	g := f.gang(t)
	g.Spec.Lifecycle.PreDelete = gang.PreDeleteHook{Label: handOverLabel, TimeoutSeconds: 600}
	unavailable := intstr.FromInt32(1)
	g.Spec.Strategy.RollingUpdate = &gang.RollingUpdate{MaxUnavailable: &unavailable}
	require.NoError(t, f.c.Update(context.Background(), g))
	f.sync(t)
	f.markReady(t)
	f.scale(t, 2)

	for range 2 {
		f.sync(t)
		names, _ := f.pods(t)
		assert.Equal(t, []string{"g-0", "g-1", "g-2"}, names, "nothing deleted while the gate holds")
		assert.Equal(t, []string{"g-2"}, f.marked(t), "the highest index is the victim")
	}
	f.release(t, "g-2")
	f.sync(t)
	names, _ := f.pods(t)
	assert.Equal(t, []string{"g-0", "g-1"}, names)

	// A changed template replaces g-1 first, held by the gate as well: its
	// index is not given to a new pod while the old one waits.
	g = f.gang(t)
	g.Spec.Template.Spec.Containers[0].Image = "trainer:2"
	require.NoError(t, f.c.Update(context.Background(), g))
	for range 2 {
		f.sync(t)
		assert.Equal(t, map[string]string{"g-0": "trainer:1", "g-1": "trainer:1"}, f.images(t), "nothing replaced while the gate holds")
		assert.Equal(t, []string{"g-1"}, f.marked(t))
	}
	f.release(t, "g-1")
	f.sync(t)
	f.sync(t)
	assert.Equal(t, map[string]string{"g-0": "trainer:1", "g-1": "trainer:2"}, f.images(t), "replaced once released")
	assert.Empty(t, f.marked(t))
}

// The gate's fields are spec.lifecycle.preDelete.{label,timeoutSeconds},
// absent when unset, and the CRD's schema keeps them.
func TestGangPreDeleteFields(t *testing.T) {
	var spec gang.GangSpec
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "lifecycle", "no gate, no field")
	spec.Lifecycle.PreDelete = gang.PreDeleteHook{Label: handOverLabel, TimeoutSeconds: 5}
	raw, err = json.Marshal(spec)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"lifecycle":{"preDelete":{"label":"examples.ctrlkit.io/hand-over","timeoutSeconds":5}}`)
	assert.Contains(t, string(gang.CRD), "                lifecycle:\n                  type: object\n                  properties:\n                    preDelete:\n")
	assert.Contains(t, string(gang.CRD), "                        label:\n                          type: string\n                        timeoutSeconds:\n")
}
