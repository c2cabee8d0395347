package expecthandler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
	"github.com/ctrlkit/ctrlkit/ctrlruntime/expecthandler"
)

// With named expectations only the expected names satisfy the owner: an
// unrelated object with the same controller reference, or the same create
// delivered twice, does not. The counting handler let either lower the
// count.
func TestNamedCreations(t *testing.T) {
	ctx := context.Background()
	tr := expecthandler.NewTracker(configMapKind)
	h := tr.Handler()
	q := ctrlruntime.NewTypedQueue[reconcileRequest]("handler-named", nil)
	defer q.ShutDown()
	o := owner("job", "uid-1")

	require.NoError(t, tr.ExpectCreationsNamed(o, []string{"job-0", "job-1", "job-1"}))
	assert.False(t, tr.Satisfied(o))
	h.Create(ctx, event.CreateEvent{Object: ownedPod("stranger", "1", o)}, q)
	h.Create(ctx, event.CreateEvent{Object: ownedPod("job-0", "1", o)}, q)
	h.Create(ctx, event.CreateEvent{Object: ownedPod("job-0", "1", o), IsInInitialList: true}, q)
	assert.False(t, tr.Satisfied(o), "job-1 is still expected")
	assert.Equal(t, map[string]int{"ns/job": 0}, drain(t, q), "every event still enqueues the owner")

	h.Create(ctx, event.CreateEvent{Object: ownedPod("job-1", "1", o)}, q)
	assert.True(t, tr.Satisfied(o))

	// A named create that failed will never be observed.
	require.NoError(t, tr.ExpectCreationsNamed(o, []string{"job-2", "job-3"}))
	tr.CreationFailedNamed(o, "job-2")
	tr.CreationFailedNamed(o, "job-2")
	tr.CreationFailedNamed(o, "not-expected")
	assert.False(t, tr.Satisfied(o))
	tr.CreationFailedNamed(o, "job-3")
	assert.True(t, tr.Satisfied(o))

	// The same handler serves counted records.
	require.NoError(t, tr.ExpectCreations(o, 1))
	h.Create(ctx, event.CreateEvent{Object: ownedPod("any-name", "1", o)}, q)
	assert.True(t, tr.Satisfied(o))

	require.NoError(t, tr.ExpectCreationsNamed(o, nil))
	assert.True(t, tr.Satisfied(o), "no names: fulfilled at once")
}
