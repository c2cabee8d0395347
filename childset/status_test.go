package childset_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/childset"
)

// statusSpec records the statuses written, and reads minReadySeconds from
// the owner's spec.
type statusSpec struct {
	rsSpec
	written []childset.Status
	err     error
}

func (s *statusSpec) UpdateStatus(_ context.Context, _ *appsv1.ReplicaSet, st childset.Status) error {
	s.written = append(s.written, st)
	return s.err
}

func (*statusSpec) MinReadySeconds(rs *appsv1.ReplicaSet) int32 { return rs.Spec.MinReadySeconds }

// readySinceKind reads when a ConfigMap became ready from its
// "ready-since" annotation (RFC 3339).
type readySinceKind struct{ cmKind }

func (readySinceKind) ReadySince(cm *v1.ConfigMap) time.Time {
	t, _ := time.Parse(time.RFC3339, cm.Annotations["ready-since"])
	return t
}

func readyChild(name string, owner *appsv1.ReplicaSet, since time.Time) *v1.ConfigMap {
	cm := newChild(name, owner, map[string]string{"app": "web"})
	cm.Annotations = map[string]string{"ready": "true", "ready-since": since.Format(time.RFC3339)}
	return cm
}

// The status counts what the sync saw; a ready child becomes available
// minReadySeconds after it became ready, and the sync asks to look again
// at that moment.
func TestStatusCountsAndAvailability(t *testing.T) {
	e := newEnv(t)
	spec := &statusSpec{rsSpec: rsSpec{e.owners}}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](spec, readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}},
		configMapControl(e.client, nil), childset.WithClock(e.clock))
	owner := newOwner("web", 4)
	owner.Generation = 7
	owner.Spec.MinReadySeconds = 30
	e.addOwner(owner)
	now := e.clock.Now()
	gone := newChild("web-gone", owner, map[string]string{"app": "web"})
	gone.DeletionTimestamp = &metav1.Time{Time: now}
	e.seed(
		readyChild("web-old", owner, now.Add(-time.Minute)),              // available
		readyChild("web-new", owner, now.Add(-10*time.Second)),           // available in 20 s
		newChild("web-starting", owner, map[string]string{"app": "web"}), // not ready
		gone,
	)
	res := e.reconcile("web")
	require.Len(t, spec.written, 1)
	assert.Equal(t, childset.Status{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, TerminatingReplicas: 1, ObservedGeneration: 7}, spec.written[0])
	assert.Equal(t, 20*time.Second, res.RequeueAfter, "when web-new becomes available")

	e.clock.Step(20*time.Second + time.Nanosecond) // strictly past, as upstream counts
	e.catchUp()
	e.reconcile("web")
	assert.EqualValues(t, 2, spec.written[len(spec.written)-1].AvailableReplicas)
}

// A failed status write fails the sync, after its creations.
func TestStatusWriteFailureFailsTheSync(t *testing.T) {
	e := newEnv(t)
	spec := &statusSpec{rsSpec: rsSpec{e.owners}, err: errors.New("conflict")}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](spec, cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)},
		configMapControl(e.client, nil))
	e.addOwner(newOwner("web", 2))
	_, err := e.r.Reconcile(context.Background(), ns+"/web")
	require.ErrorContains(t, err, "conflict")
	assert.Len(t, e.apiChildren(), 2, "the creations happened")
	assert.Equal(t, childset.Status{Replicas: 0, ObservedGeneration: 0}, spec.written[0], "the status of what the sync saw")
}

// At the very instant minReadySeconds have passed a child is not yet
// available, as upstream's podutil.IsPodAvailable counts (strictly after),
// and the sync asks to look again a nanosecond later, so the status never
// rests on a count the next instant would change.
func TestAvailableStrictlyAfterMinReadySeconds(t *testing.T) {
	e := newEnv(t)
	spec := &statusSpec{rsSpec: rsSpec{e.owners}}
	e.r = childset.NewReconciler[*appsv1.ReplicaSet](spec, readySinceKind{cmKind{childset.IndexerLister[*v1.ConfigMap](e.children)}},
		configMapControl(e.client, nil), childset.WithClock(e.clock))
	owner := newOwner("web", 1)
	owner.Spec.MinReadySeconds = 30
	e.addOwner(owner)
	e.seed(readyChild("web-a", owner, e.clock.Now().Add(-30*time.Second)))
	res := e.reconcile("web")
	assert.EqualValues(t, 0, spec.written[0].AvailableReplicas)
	assert.Equal(t, time.Nanosecond, res.RequeueAfter)
	e.clock.Step(time.Nanosecond)
	e.reconcile("web")
	assert.EqualValues(t, 1, spec.written[1].AvailableReplicas)
}
