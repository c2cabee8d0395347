package podset

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

type guardMark struct{}

// markCheckingPodControl fails a creation whose context does not carry the
// guard's mark, or is already done.
type markCheckingPodControl struct {
	*podcontrol.FakePodControl
	unmarked atomic.Int32
}

func (p *markCheckingPodControl) CreatePods(ctx context.Context, ns string, t *v1.PodTemplateSpec, o runtime.Object, ref *metav1.OwnerReference) error {
	if ctx.Value(guardMark{}) == nil {
		p.unmarked.Add(1)
		return errors.New("written outside the guard")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return p.FakePodControl.CreatePods(ctx, ns, t, o, ref)
}

func TestSyncGuardFencesEverySync(t *testing.T) {
	rs := newRS("rs", 3, fooBar)
	rs2 := newRS("rs2", 2, map[string]string{"app": "two"})
	key := rs.Namespace + "/" + rs.Name
	var holds atomic.Bool
	var entered, released atomic.Int32
	var cancelGuarded, wanted atomic.Bool
	guard := func(ctx context.Context, k string) (context.Context, func(), time.Duration, bool) {
		require.Equal(t, key, k)
		if !holds.Load() {
			// done is never called when ok is false.
			if wanted.Load() {
				return ctx, nil, time.Minute, false
			}
			return ctx, nil, 0, false
		}
		entered.Add(1)
		g, cancel := context.WithCancel(context.WithValue(ctx, guardMark{}, true))
		if cancelGuarded.Load() {
			cancel() // the share moved on before the writes
		}
		return g, func() { cancel(); released.Add(1) }, 0, true
	}
	pc := &markCheckingPodControl{FakePodControl: &podcontrol.FakePodControl{}}
	e := newEnv(t, []runtime.Object{rs, rs2}, WithSyncGuard(guard), WithPodControl(pc), WithEventRecorder(record.NewFakeRecorder(100)))
	e.addOwner(rs)

	// Outside the share: skipped, nothing written, no error, no requeue.
	require.NoError(t, e.sync(rs))
	creates, _, _ := pc.Counts()
	require.Zero(t, creates)
	require.Zero(t, e.c.Queue().Len())

	// This replica's, but not held now (its Lease lapsed, or its claim is
	// not through yet): skipped, and looked at again after the guard's delay,
	// not dropped.
	wanted.Store(true)
	res, err := e.c.Reconcile(e.ctx, key)
	require.NoError(t, err)
	require.Equal(t, time.Minute, res.RequeueAfter)
	creates, _, _ = pc.Counts()
	require.Zero(t, creates)

	// Inside: written under the guarded context, and done called.
	holds.Store(true)
	require.NoError(t, e.sync(rs))
	creates, _, _ = pc.Counts()
	require.Equal(t, 3, creates)
	require.Zero(t, pc.unmarked.Load())
	require.Equal(t, int32(1), entered.Load())
	require.Equal(t, int32(1), released.Load())

	// A guarded context that ends stops the writes and fails the sync.
	key = rs2.Namespace + "/" + rs2.Name
	e.addOwner(rs2)
	cancelGuarded.Store(true)
	require.Error(t, e.sync(rs2))
	creates, _, _ = pc.Counts()
	require.Equal(t, 3, creates, "no creation after the guard ended")
	require.Equal(t, entered.Load(), released.Load())
}

func TestWithoutSyncGuardNothingChanges(t *testing.T) {
	rs := newRS("rs", 2, fooBar)
	e := newEnv(t, []runtime.Object{rs}, WithSyncGuard(nil))
	e.addOwner(rs)
	require.NoError(t, e.sync(rs))
	e.requireCounts(2, 0, 0)
}
