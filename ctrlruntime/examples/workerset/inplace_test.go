package workerset_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/workerset"
)

// runImages stands in for the Workers' agents: each reports the image its
// spec asks for, which it runs from now on.
func (f rollFixture) runImages(t *testing.T) {
	t.Helper()
	for _, w := range workers(t, f.c) {
		if w.Status.Image != w.Spec.Image {
			w.Status.Image = w.Spec.Image
			require.NoError(t, f.c.Status().Update(context.Background(), &w))
		}
	}
}

// An image change with strategy InPlaceIfPossible moves every Worker to
// the new revision where it stands, at most maxUnavailable of them at a
// time; a machine class change recreates them.
func TestWorkerSetInPlaceRollout(t *testing.T) {
	set := newSet(4)
	surge, unavailable := intstr.FromInt32(0), intstr.FromInt32(1)
	set.Spec.Strategy = workerset.Strategy{Type: string(childset.InPlaceIfPossible),
		RollingUpdate: &workerset.RollingUpdate{MaxSurge: &surge, MaxUnavailable: &unavailable}}
	f := newRollFixture(t, set)
	f.sync(t)
	f.runImages(t)
	f.sync(t)
	// The fake client gives objects no UID: a Worker is known by its name,
	// which a replacement (generateName) never reuses.
	before := map[string]bool{}
	for name := range workers(t, f.c) {
		before[name] = true
	}
	require.Len(t, before, 4)

	set = f.set(t)
	set.Spec.Template.Spec.Image = "worker:2"
	require.NoError(t, f.c.Update(context.Background(), set))
	for n := 0; ; n++ {
		require.Less(t, n, 20, "the in-place rollout did not finish")
		f.sync(t)
		running := 0
		for _, w := range workers(t, f.c) {
			assert.True(t, before[w.Name], "%s is not one of the Workers before", w.Name)
			if w.Status.Image == w.Spec.Image {
				running++
			}
		}
		assert.GreaterOrEqual(t, running, 3, "sync %d: at most one Worker updating", n)
		f.runImages(t)
		if st := f.set(t).Status; st.UpdatedReplicas == 4 && st.AvailableReplicas == 4 {
			break
		}
	}
	for _, w := range workers(t, f.c) {
		assert.Equal(t, "worker:2", w.Spec.Image)
	}

	set = f.set(t)
	set.Spec.Template.Spec.MachineClass = "m5.xlarge"
	require.NoError(t, f.c.Update(context.Background(), set))
	for range 20 {
		f.sync(t)
		f.runImages(t)
	}
	for name, w := range workers(t, f.c) {
		assert.NotContains(t, before, name, "recreated")
		assert.Equal(t, "m5.xlarge", w.Spec.MachineClass)
	}
}
