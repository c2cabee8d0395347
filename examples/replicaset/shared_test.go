package replicaset

import (
	"testing"

	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// writtenStatus returns the last status the controller wrote for the owner,
// as (replicas, ready, available, terminatingReplicas-or-nil).
func writtenStatus(t *testing.T, e *env) (int32, int32, int32, *int32) {
	t.Helper()
	var last runtime.Object
	for _, a := range e.client.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			last = u.GetObject()
		}
	}
	require.NotNil(t, last, "a status was written")
	switch o := last.(type) {
	case *appsv1.ReplicaSet:
		return o.Status.Replicas, o.Status.ReadyReplicas, o.Status.AvailableReplicas, o.Status.TerminatingReplicas
	case *v1.ReplicationController:
		return o.Status.Replicas, o.Status.ReadyReplicas, o.Status.AvailableReplicas, nil
	}
	t.Fatalf("unexpected status object %T", last)
	return 0, 0, 0, nil
}

// TestSharedScenarios runs every scenario of the table, unchanged,
// for ReplicaSets and ReplicationControllers through the one core.
func TestSharedScenarios(t *testing.T) {
	type scenario struct {
		name string
		run  func(t *testing.T, k testKind)
	}
	scenarios := []scenario{
		{"scale up creates owned pods", func(t *testing.T, k testKind) {
			o := k.newOwner(3, fooBar)
			e := newEnvWithOwner(t, k, o)
			require.NoError(t, e.sync(o))
			e.requireCounts(3, 0, 0)
			for _, ref := range e.pc.ControllerRefs {
				assert.Equal(t, k.gvk.Kind, ref.Kind)
				assert.Equal(t, k.gvk.GroupVersion().String(), ref.APIVersion)
				assert.Equal(t, o.GetUID(), ref.UID)
				assert.True(t, *ref.Controller)
				assert.True(t, *ref.BlockOwnerDeletion)
			}
			for _, tmpl := range e.pc.Templates {
				assert.Equal(t, testTemplate(fooBar).Labels, tmpl.Labels)
			}
			assert.False(t, e.c.Expectations().SatisfiedExpectations(e.expKey(o)))
		}},
		{"scale down deletes and counts terminating pods", func(t *testing.T, k testKind) {
			o := k.newOwner(1, fooBar)
			e := newEnvWithOwner(t, k, o)
			pods := newPods(3, "pod", o, k, v1.PodRunning, fooBar, true)
			leaving := newPod("leaving", o, k, v1.PodRunning, fooBar, true)
			leaving.DeletionTimestamp = ptr.To(metav1.Now())
			e.addPods(append(pods, leaving)...)
			require.NoError(t, e.sync(o))
			e.requireCounts(0, 2, 0)
			_, _, _, terminating := writtenStatus(t, e)
			if k.name == "ReplicaSet" {
				require.NotNil(t, terminating)
				assert.Equal(t, int32(1), *terminating)
			} else {
				assert.Nil(t, terminating, "ReplicationController status has no terminatingReplicas")
			}
		}},
		{"adopt a matching orphan", func(t *testing.T, k testKind) {
			o := k.newOwner(1, fooBar)
			e := newEnvWithOwner(t, k, o)
			e.addPods(newPod("orphan", o, k, v1.PodRunning, fooBar, false))
			require.NoError(t, e.sync(o))
			e.requireCounts(0, 0, 1)
			assert.Contains(t, string(e.pc.Patches[0]), `"kind":"`+k.gvk.Kind+`"`)
			assert.Contains(t, string(e.pc.Patches[0]), string(o.GetUID()))
			replicas, ready, available, _ := writtenStatus(t, e)
			assert.Equal(t, [3]int32{1, 1, 1}, [3]int32{replicas, ready, available})
		}},
		{"release an owned pod that no longer matches", func(t *testing.T, k testKind) {
			o := k.newOwner(1, fooBar)
			e := newEnvWithOwner(t, k, o)
			e.addPods(newPod("stray", o, k, v1.PodRunning, map[string]string{"foo": "other"}, true))
			require.NoError(t, e.sync(o))
			// Released, and replaced.
			e.requireCounts(1, 0, 1)
			assert.Contains(t, string(e.pc.Patches[0]), `"$patch":"delete"`)
		}},
		{"burst caps one sync", func(t *testing.T, k testKind) {
			o := k.newOwner(10, fooBar)
			e := newEnvWithOwner(t, k, o, podset.WithBurstReplicas(4))
			require.NoError(t, e.sync(o))
			e.requireCounts(4, 0, 0)
			e.requireAsleep(o, 4, 0)
		}},
		{"expectations gate the next sync", func(t *testing.T, k testKind) {
			o := k.newOwner(2, fooBar)
			e := newEnvWithOwner(t, k, o)
			require.NoError(t, e.sync(o))
			e.requireCounts(2, 0, 0)
			e.pc.Clear()
			require.NoError(t, e.sync(o))
			e.requireCounts(0, 0, 0)
			// Observing both creations, by the pods' controllerRef UID, opens it.
			for _, p := range newPods(2, "p", o, k, v1.PodPending, fooBar, true) {
				e.addPods(p)
				e.c.ChildEventHandler().OnAdd(p, false)
			}
			assert.True(t, e.c.Expectations().SatisfiedExpectations(e.expKey(o)))
			// A pod whose ref names the same owner with another UID is not ours.
			stale := newPod("stale", o, k, v1.PodPending, fooBar, true)
			stale.OwnerReferences[0].UID = types.UID("someone-else")
			e.c.ChildEventHandler().OnAdd(stale, false)
			assert.Equal(t, []string{key(o)}, queued(e.c), "only the real creations wake the owner")
		}},
		{"failure condition uses the kind's condition type", func(t *testing.T, k testKind) {
			o := k.newOwner(1, fooBar)
			e := newEnvWithOwner(t, k, o)
			e.pc.Err = assert.AnError
			require.Error(t, e.sync(o))
			var last runtime.Object
			for _, a := range e.client.Actions() {
				if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
					last = u.GetObject()
				}
			}
			require.NotNil(t, last)
			assert.Equal(t, "FailedCreate", k.failureReason(last))
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			forBothKinds(t, sc.run)
		})
	}
}
