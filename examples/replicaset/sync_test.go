package replicaset

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/podstate"
)

var fooBar = map[string]string{"foo": "bar"}

// forBothKinds runs a scenario once per owner kind.
func forBothKinds(t *testing.T, f func(t *testing.T, k testKind)) {
	for _, k := range bothKinds {
		t.Run(k.name, func(t *testing.T) { f(t, k) })
	}
}

func TestSyncDoesNothingInSteadyState(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(2, fooBar)
		e := newEnvWithOwner(t, k, o)
		e.addPods(newPods(2, "pod", o, k, v1.PodRunning, fooBar, true)...)
		require.NoError(t, e.sync(o))
		e.requireCounts(0, 0, 0)
	})
}

func TestDeleteFinalStateUnknown(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(1, fooBar)
		e := newEnvWithOwner(t, k, o)
		pod := newPod("pod", o, k, v1.PodRunning, fooBar, true)
		e.c.ChildEventHandler().OnDelete(cache.DeletedFinalStateUnknown{Key: "default/pod", Obj: pod})
		assert.Equal(t, []string{key(o)}, queued(e.c))
	})
}

func TestSyncCreateFailuresUnderCreateLimit(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(100, fooBar)
		e := newEnvWithOwner(t, k, o)
		e.pc.CreateLimit = 10
		err := e.sync(o)
		require.Error(t, err)
		e.requireCounts(10, 0, 0)
		// Slow start stops at the first failing batch: 1+2+4+8.
		assert.LessOrEqual(t, e.pc.CreateCallCount, 15)
		// The failure is reported as a ReplicaFailure condition.
		var written runtime.Object
		for _, a := range e.client.Actions() {
			if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
				written = u.GetObject()
			}
		}
		require.NotNil(t, written, "status written")
		assert.Equal(t, "FailedCreate", k.failureReason(written))
	})
}

func TestSyncDormancy(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(2, fooBar)
		e := newEnvWithOwner(t, k, o)
		e.addPods(newPods(1, "pod", o, k, v1.PodRunning, fooBar, true)...)

		// One replica short: one create, and expectations set.
		k.setStatus(o, 1, 1, 1)
		require.NoError(t, e.sync(o))
		e.requireCounts(1, 0, 0)

		// Expectations hold creates back but not the status update.
		k.setStatus(o, 0, 0, 0)
		e.pc.Clear()
		require.NoError(t, e.sync(o))
		e.requireCounts(0, 0, 0)

		// Observing the creation re-opens the gate; the create fails.
		e.c.Expectations().CreationObserved(e.expKey(o))
		k.setStatus(o, 1, 1, 1)
		e.pc.Clear()
		e.pc.Err = errors.New("fake Error")
		require.Error(t, e.sync(o))
		e.requireCounts(1, 0, 0)

		// The failed create lowered the expectations: the next sync creates.
		e.pc.Clear()
		e.pc.Err = nil
		require.NoError(t, e.sync(o))
		e.requireCounts(1, 0, 0)
		assert.Equal(t, 2, e.statusUpdates(), "status PUTs overall")
	})
}

func TestControllerUpdateRequeue(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(1, fooBar)
		k.setStatus(o, 2, 0, 0)
		e := newEnvWithOwner(t, k, o)
		failStatusUpdates(e.client)
		e.addPods(newPods(1, "pod", o, k, v1.PodRunning, fooBar, true)...)
		e.c.Queue().Add(key(o))
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
		assert.Equal(t, 1, e.c.Queue().NumRequeues(key(o)), "a failed status update requeues rate-limited")
		require.Eventually(t, func() bool { return e.c.Queue().Len() == 1 }, 5*time.Second, time.Millisecond)
	})
}

func TestStatusUpdateFailureRetriesOnce(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(1, fooBar)
		e := newEnvWithOwner(t, k, o)
		e.addPods(newPods(1, "pod", o, k, v1.PodRunning, fooBar, true)...)
		failStatusUpdates(e.client)
		// Unmet expectations keep manageReplicas out of the way.
		require.NoError(t, e.c.Expectations().ExpectCreations(e.expKey(o), 1))
		require.Error(t, e.sync(o))
		var gets, updates int
		for _, a := range e.client.Actions() {
			switch {
			case a.GetVerb() == "get" && a.GetResource().Resource == k.statusResource:
				gets++
			case a.GetVerb() == "update" && a.GetSubresource() == "status":
				updates++
			}
		}
		assert.Equal(t, 1, gets)
		assert.Equal(t, 2, updates)
	})
}

// TestBurstReplicas follows upstream's scenario: each sync creates or deletes
// at most burst pods, then sleeps until every one of them is observed.
func TestBurstReplicas(t *testing.T) {
	cases := []struct{ burst, replicas int }{{5, 30}, {5, 12}, {3, 2}}
	for _, tc := range cases {
		forBothKinds(t, func(t *testing.T, k testKind) {
			t.Run(fmt.Sprintf("burst=%d,replicas=%d", tc.burst, tc.replicas), func(t *testing.T) {
				runBurst(t, k, tc.burst, tc.replicas)
			})
		})
	}
}

func runBurst(t *testing.T, k testKind, burst, replicas int) {
	o := k.newOwner(int32(replicas), fooBar)
	e := newEnvWithOwner(t, k, o, podset.WithBurstReplicas(burst))
	expKey := e.expKey(o)
	var pods []*v1.Pod
	// Scale up, then down to 0 and, to cover deletions, from 2× back.
	for _, target := range []int{replicas, 0} {
		setReplicasOf(o, int32(target))
		for len(pods) != target {
			e.pc.Clear()
			require.NoError(t, e.sync(o))
			c, d, _ := e.counts()
			if target > len(pods) {
				want := min(target-len(pods), burst)
				require.Equal(t, want, c, "creates capped at burst")
				// All but one creation observed: still asleep.
				for i := range want {
					pod := newPod(fmt.Sprintf("p%d-%d", len(pods), i), o, k, v1.PodRunning, fooBar, true)
					pods = append(pods, pod)
					e.addPods(pod)
					if i < want-1 {
						e.c.ChildEventHandler().OnAdd(pod, false)
					}
				}
				e.requireAsleep(o, 1, 0)
				e.c.ChildEventHandler().OnAdd(pods[len(pods)-1], false)
			} else {
				want := min(len(pods)-target, burst)
				require.Equal(t, want, d, "deletes capped at burst")
				deleted := map[string]bool{}
				for _, name := range e.pc.DeletePodName {
					require.False(t, deleted[name], "no double delete")
					deleted[name] = true
				}
				var kept, gone []*v1.Pod
				for _, p := range pods {
					if deleted[p.Name] {
						gone = append(gone, p)
					} else {
						kept = append(kept, p)
					}
				}
				for i, p := range gone {
					require.NoError(t, e.podStore().Delete(p))
					if i < len(gone)-1 {
						e.c.ChildEventHandler().OnDelete(p)
					}
				}
				e.requireAsleep(o, 0, 1)
				e.c.ChildEventHandler().OnDelete(gone[len(gone)-1])
				pods = kept
			}
		}
		require.True(t, e.c.Expectations().SatisfiedExpectations(expKey))
		require.Len(t, pods, target)
	}
}

func setReplicasOf(o metav1.Object, n int32) {
	switch x := o.(type) {
	case *appsv1.ReplicaSet:
		x.Spec.Replicas = &n
	case *v1.ReplicationController:
		x.Spec.Replicas = &n
	}
}

func TestDeleteOwnerClearsExpectations(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(1, fooBar)
		e := newEnvWithOwner(t, k, o)
		require.NoError(t, e.sync(o))
		e.requireCounts(1, 0, 0)
		_, exists, err := e.c.Expectations().GetExpectations(e.expKey(o))
		require.NoError(t, err)
		require.True(t, exists)

		require.NoError(t, e.kind.store(e.inf).Delete(o))
		e.c.OwnerEventHandler().OnDelete(o)
		_, exists, err = e.c.Expectations().GetExpectations(e.expKey(o))
		require.NoError(t, err)
		assert.False(t, exists, "expectations dropped with the owner")
		// Lowering the stale record has no effect, and a sync does nothing.
		e.c.Expectations().LowerExpectations(e.expKey(o), 1, 0)
		_, exists, _ = e.c.Expectations().GetExpectations(e.expKey(o))
		assert.False(t, exists)
		e.pc.Clear()
		require.NoError(t, e.sync(o))
		e.requireCounts(0, 0, 0)
	})
}

// TestExpectationsOnRecreate also pins the owner-UID binding: a re-created
// owner of the same name is synced at once even when the delete event was
// never seen, where upstream would wait for the old record to expire
// (kubernetes#142142).
func TestExpectationsOnRecreate(t *testing.T) {
	for _, sawDelete := range []bool{true, false} {
		forBothKinds(t, func(t *testing.T, k testKind) {
			t.Run(fmt.Sprintf("sawDelete=%v", sawDelete), func(t *testing.T) {
				old := k.newOwner(1, fooBar)
				e := newEnvWithOwner(t, k, old)
				require.NoError(t, e.sync(old))
				e.requireCounts(1, 0, 0)
				require.False(t, e.c.Expectations().SatisfiedExpectations(e.expKey(old)))

				require.NoError(t, e.kind.store(e.inf).Delete(old))
				if sawDelete {
					e.c.OwnerEventHandler().OnDelete(old)
					assert.Equal(t, []string{key(old)}, queued(e.c))
				}
				fresh := k.newOwner(1, fooBar) // same name, new UID
				require.NotEqual(t, old.GetUID(), fresh.GetUID())
				e.addOwner(fresh)
				e.pc.Clear()
				require.NoError(t, e.sync(fresh))
				e.requireCounts(1, 0, 0)
				assert.False(t, e.c.Expectations().SatisfiedExpectations(e.expKey(fresh)))
			})
		})
	}
}

func TestOverlappingOwners(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		e := newEnv(t, k, nil)
		var owners []metav1.Object
		ts := metav1.Now()
		for i := range 9 {
			o := k.newOwner(1, fooBar)
			o.SetName(fmt.Sprintf("rs%d", i))
			o.SetCreationTimestamp(ts)
			e.addOwner(o)
			owners = append(owners, o)
		}
		pod := newPod("pod", owners[3], k, v1.PodRunning, fooBar, true)
		e.c.ChildEventHandler().OnAdd(pod, false)
		assert.Equal(t, []string{key(owners[3])}, queued(e.c))
	})
}

func TestDeletionTimestamp(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(1, fooBar)
		e := newEnvWithOwner(t, k, o)
		expKey := e.expKey(o)
		pods := newPods(2, "pod", o, k, v1.PodRunning, fooBar, true)
		pod, second := pods[0], pods[1]
		now := metav1.Now()
		withTS := func(p *v1.Pod, rv string) *v1.Pod {
			c := p.DeepCopy()
			c.DeletionTimestamp = &now
			c.ResourceVersion = rv
			return c
		}
		fulfilled := func() bool { return e.c.Expectations().SatisfiedExpectations(expKey) }

		// A pod added with a deletionTimestamp counts as deleted.
		require.NoError(t, e.c.Expectations().ExpectDeletions(expKey, []string{podstate.Key(pod)}))
		e.c.ChildEventHandler().OnAdd(withTS(pod, "2"), false)
		assert.Equal(t, []string{key(o)}, queued(e.c))
		assert.True(t, fulfilled())

		// So does an update that sets it.
		require.NoError(t, e.c.Expectations().ExpectDeletions(expKey, []string{podstate.Key(pod)}))
		e.c.ChildEventHandler().OnUpdate(pod, withTS(pod, "3"))
		assert.Equal(t, []string{key(o)}, queued(e.c))
		assert.True(t, fulfilled())

		// An update where both sides carry it, for a pod not expected,
		// does not lower the count.
		require.NoError(t, e.c.Expectations().ExpectDeletions(expKey, []string{podstate.Key(second)}))
		e.c.ChildEventHandler().OnUpdate(withTS(pod, "4"), withTS(pod, "5"))
		assert.False(t, fulfilled())
		e.c.ChildEventHandler().OnDelete(withTS(pod, "6"))
		assert.False(t, fulfilled(), "deleting an unexpected pod does not count")
		queued(e.c)
		e.c.ChildEventHandler().OnDelete(second)
		assert.Equal(t, []string{key(o)}, queued(e.c))
		assert.True(t, fulfilled())
	})
}

func TestDoNotPatchPodWithOtherControllerRef(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(2, fooBar)
		other := k.newOwner(2, fooBar)
		other.SetName("other")
		e := newEnvWithOwner(t, k, o)
		e.addOwner(other)
		e.addPods(newPod("theirs", other, k, v1.PodRunning, fooBar, true))
		require.NoError(t, e.sync(o))
		e.requireCounts(2, 0, 0)
	})
}

func TestPatchPodFails(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(2, fooBar)
		e := newEnvWithOwner(t, k, o)
		e.addPods(newPods(2, "orphan", o, k, v1.PodRunning, fooBar, false)...)
		e.pc.Err = errors.New("fake Error")
		syncErr := e.sync(o)
		require.Error(t, syncErr)
		assert.Contains(t, syncErr.Error(), "fake Error")
		e.requireCounts(0, 0, 2)
		// Through a worker, the failure requeues the key rate-limited.
		e.c.Queue().Add(key(o))
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
		assert.Equal(t, 1, e.c.Queue().NumRequeues(key(o)), "requeued")
	})
}

func TestDoNotAdoptOrCreateIfBeingDeleted(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(2, fooBar)
		o.SetDeletionTimestamp(ptr.To(metav1.Now()))
		e := newEnvWithOwner(t, k, o)
		e.addPods(newPod("orphan", o, k, v1.PodRunning, fooBar, false))
		require.NoError(t, e.sync(o))
		e.requireCounts(0, 0, 0)
	})
}

// TestAdoptionRechecksTheAPIServer: the cache says the owner is fine but an
// uncached read says it is being deleted, or was re-created with another UID;
// either way nothing is adopted or created and the sync fails.
func TestAdoptionRechecksTheAPIServer(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(inAPI metav1.Object)
		wantErr string
	}{
		{"being deleted (race)", func(o metav1.Object) { o.SetDeletionTimestamp(ptr.To(metav1.Now())) }, "has just been deleted"},
		{"re-created with another UID", func(o metav1.Object) { o.SetUID(uuid.NewUUID()) }, "is gone"},
	}
	for _, tc := range cases {
		forBothKinds(t, func(t *testing.T, k testKind) {
			t.Run(tc.name, func(t *testing.T) {
				o := k.newOwner(2, fooBar)
				inAPI := o.(runtime.Object).DeepCopyObject().(metav1.Object)
				tc.mutate(inAPI)
				e := newEnv(t, k, []runtime.Object{inAPI.(runtime.Object)})
				e.addOwner(o)
				e.addPods(newPod("orphan", o, k, v1.PodRunning, fooBar, false))
				err := e.sync(o)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				e.requireCounts(0, 0, 0)
			})
		})
	}
}

func TestUpdatePodOwnerChanges(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		rs1 := k.newOwner(1, map[string]string{"foo": "bar"})
		rs2 := k.newOwner(1, map[string]string{"bar": "foo"})
		rs2.SetName("rs2")
		e := newEnv(t, k, nil)
		e.addOwner(rs1)
		e.addOwner(rs2)
		byRS1 := newPod("pod", rs1, k, v1.PodRunning, map[string]string{"foo": "bar"}, true)
		byRS2 := newPod("pod", rs2, k, v1.PodRunning, map[string]string{"bar": "foo"}, true)
		relabel := func(p *v1.Pod, labels map[string]string, owned metav1.Object, rv string) *v1.Pod {
			c := p.DeepCopy()
			c.Labels = labels
			c.ResourceVersion = rv
			c.OwnerReferences = nil
			if owned != nil {
				c.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owned, k.gvk)}
			}
			return c
		}
		cases := []struct {
			name     string
			old, cur *v1.Pod
			want     []string
		}{
			{"owned by rs1, labels move to rs2's", byRS1, relabel(byRS1, map[string]string{"bar": "foo"}, rs1, "2"), []string{key(rs1)}},
			{"owned by rs2 becomes orphan matching rs2", byRS2, relabel(byRS2, map[string]string{"bar": "foo"}, nil, "2"), []string{key(rs2)}},
			{"owned by rs1 becomes orphan matching rs2", byRS1, relabel(byRS1, map[string]string{"bar": "foo"}, nil, "2"), []string{key(rs1), key(rs2)}},
			{"keeps rs2 ref, labels change", byRS2, relabel(byRS2, map[string]string{"baz": "qux"}, rs2, "2"), []string{key(rs2)}},
			{"resync with the same resourceVersion", byRS1, byRS1.DeepCopy(), nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				e.c.ChildEventHandler().OnUpdate(tc.old, tc.cur)
				assert.ElementsMatch(t, tc.want, queued(e.c))
			})
		}
	})
}

func TestUpdateOwnerUIDChangeIsDeleteThenAdd(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		old := k.newOwner(1, fooBar)
		e := newEnvWithOwner(t, k, old)
		require.NoError(t, e.c.Expectations().ExpectCreations(e.expKey(old), 3))
		cur := k.newOwner(1, fooBar)
		e.c.OwnerEventHandler().OnUpdate(old, cur)
		_, exists, err := e.c.Expectations().GetExpectations(e.expKey(old))
		require.NoError(t, err)
		assert.False(t, exists, "the old incarnation's expectations are gone")
		assert.Equal(t, []string{key(cur)}, queued(e.c))
	})
}

func TestOrphanWakesEveryMatchingOwner(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		a, b := k.newOwner(1, fooBar), k.newOwner(1, fooBar)
		b.SetName("b")
		e := newEnv(t, k, nil)
		e.addOwner(a)
		e.addOwner(b)
		orphan := newPod("orphan", a, k, v1.PodRunning, fooBar, false)
		e.c.ChildEventHandler().OnAdd(orphan, false)
		assert.ElementsMatch(t, []string{key(a), key(b)}, queued(e.c))
		// No labels: nobody to wake, no error.
		e.c.ChildEventHandler().OnAdd(newPod("bare", a, k, v1.PodRunning, nil, false), false)
		assert.Empty(t, queued(e.c))
	})
}

func TestControllerRefChangeSyncsBothOwners(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		a, b := k.newOwner(1, fooBar), k.newOwner(1, fooBar)
		b.SetName("b")
		e := newEnv(t, k, nil)
		e.addOwner(a)
		e.addOwner(b)
		old := newPod("pod", a, k, v1.PodRunning, fooBar, true)
		cur := newPod("pod", b, k, v1.PodRunning, fooBar, true)
		cur.ResourceVersion = "2"
		e.c.ChildEventHandler().OnUpdate(old, cur)
		assert.ElementsMatch(t, []string{key(a), key(b)}, queued(e.c))
	})
}

func TestBadInput(t *testing.T) {
	t.Run("selector that cannot be converted", func(t *testing.T) {
		o := rsKind.newOwner(2, fooBar).(*appsv1.ReplicaSet)
		o.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "foo", Operator: "bogus"}}
		e := newEnvWithOwner(t, rsKind, o)
		e.c.Queue().Add(key(o))
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
		assert.Equal(t, 0, e.c.Queue().NumRequeues(key(o)), "no hot-loop requeue")
		e.requireCounts(0, 0, 0)
		require.Len(t, e.rec.Events, 1)
		assert.True(t, strings.HasPrefix(<-e.rec.Events, "Warning "+childset.ReasonSelectorInvalid))
	})
	t.Run("ReplicationController with an invalid selector value", func(t *testing.T) {
		o := rcKind.newOwner(2, map[string]string{"foo": "not a valid value!"})
		e := newEnvWithOwner(t, rcKind, o)
		require.NoError(t, e.sync(o))
		e.requireCounts(0, 0, 0)
		require.Len(t, e.rec.Events, 1)
	})
	t.Run("nil selector", func(t *testing.T) {
		o := rsKind.newOwner(2, fooBar).(*appsv1.ReplicaSet)
		o.Spec.Selector = nil
		e := newEnvWithOwner(t, rsKind, o)
		require.NoError(t, e.sync(o))
		e.requireCounts(0, 0, 0)
	})
	forBothKinds(t, func(t *testing.T, k testKind) {
		t.Run("nil spec.replicas counts as 1", func(t *testing.T) {
			o := k.newOwner(0, fooBar)
			switch x := o.(type) {
			case *appsv1.ReplicaSet:
				x.Spec.Replicas = nil
			case *v1.ReplicationController:
				x.Spec.Replicas = nil
			}
			e := newEnvWithOwner(t, k, o)
			require.NoError(t, e.sync(o))
			e.requireCounts(1, 0, 0)
			// And updates comparing nil replicas do not panic.
			e.c.OwnerEventHandler().OnUpdate(o, o)
		})
		t.Run("malformed deletion cost counts as 0", func(t *testing.T) {
			o := k.newOwner(1, fooBar)
			e := newEnvWithOwner(t, k, o)
			pods := newPods(2, "pod", o, k, v1.PodRunning, fooBar, true)
			pods[0].Annotations = map[string]string{podranking.DeletionCostAnnotation: "not-a-number"}
			pods[1].Annotations = map[string]string{podranking.DeletionCostAnnotation: "0"}
			// pod0 is younger, so with equal costs it goes first.
			pods[0].Status.Conditions[0].LastTransitionTime = metav1.Now()
			e.addPods(pods...)
			require.NoError(t, e.sync(o))
			assert.Equal(t, []string{"pod0"}, e.pc.DeletePodName)
		})
		t.Run("handlers ignore foreign objects", func(t *testing.T) {
			e := newEnv(t, k, nil)
			for _, obj := range []any{nil, "x", (*v1.Pod)(nil), (*appsv1.ReplicaSet)(nil), (*v1.ReplicationController)(nil), &v1.Service{}, cache.DeletedFinalStateUnknown{Obj: "x"}} {
				e.c.ChildEventHandler().OnAdd(obj, false)
				e.c.ChildEventHandler().OnUpdate(obj, obj)
				e.c.ChildEventHandler().OnDelete(obj)
				e.c.OwnerEventHandler().OnAdd(obj, false)
				e.c.OwnerEventHandler().OnUpdate(obj, obj)
				e.c.OwnerEventHandler().OnDelete(obj)
			}
			assert.Zero(t, e.c.Queue().Len())
		})
	})
	t.Run("malformed keys", func(t *testing.T) {
		e := newEnv(t, rsKind, nil)
		for key, why := range map[string]string{
			"a/b/c":           "a malformed key can never be synced: it is logged and dropped",
			"default/missing": "a deleted owner is not an error",
		} {
			res, err := e.c.Reconcile(e.ctx, key)
			require.NoError(t, err, why)
			assert.Zero(t, res.RequeueAfter, why)
		}
	})
}

func TestNamespaceTerminatingCountsAsSuccess(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(3, fooBar)
		e := newEnvWithOwner(t, k, o)
		terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("namespace is terminating"))
		terminating.ErrStatus.Details.Causes = append(terminating.ErrStatus.Details.Causes,
			metav1.StatusCause{Type: v1.NamespaceTerminatingCause})
		e.pc.CreateErr = terminating
		require.NoError(t, e.sync(o))
	})
}

func TestDeleteNotFoundIsNotAnError(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(1, fooBar)
		e := newEnvWithOwner(t, k, o)
		e.addPods(newPods(3, "pod", o, k, v1.PodRunning, fooBar, true)...)
		e.pc.DeleteErr = apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x")
		require.NoError(t, e.sync(o))
		e.requireCounts(0, 2, 0)
		assert.True(t, e.c.Expectations().SatisfiedExpectations(e.expKey(o)), "failed deletions are observed at once")
	})
}

func TestDeleteErrorIsReturned(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		o := k.newOwner(1, fooBar)
		e := newEnvWithOwner(t, k, o)
		e.addPods(newPods(3, "pod", o, k, v1.PodRunning, fooBar, true)...)
		// A refusal: the pods are still there, so their deletions are no
		// longer expected. (An error of unknown outcome, such as a 504,
		// keeps them expected: see podset's TestUnknownPodDeleteKeepsExpectation.)
		e.pc.DeleteErr = apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errors.New("boom"))
		err := e.sync(o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "boom")
		assert.True(t, e.c.Expectations().SatisfiedExpectations(e.expKey(o)))
	})
}

// TestMinReadySecondsRequeue checks the requeue at the exact moment the
// first ready pod becomes available.
func TestMinReadySecondsRequeue(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		now := time.Now()
		clk := clocktesting.NewFakeClock(now)
		o := k.newOwner(1, fooBar)
		switch x := o.(type) {
		case *appsv1.ReplicaSet:
			x.Spec.MinReadySeconds = 10
		case *v1.ReplicationController:
			x.Spec.MinReadySeconds = 10
		}
		e := newEnvWithOwner(t, k, o, podset.WithClock(clk))
		pod := newPod("pod", o, k, v1.PodRunning, fooBar, true)
		pod.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-3 * time.Second))
		e.addPods(pod)
		require.NoError(t, e.sync(o))
		assert.Zero(t, e.c.Queue().Len())
		clk.Step(7*time.Second - time.Millisecond)
		assert.Zero(t, e.c.Queue().Len(), "not before the pod is available")
		clk.Step(2 * time.Millisecond)
		require.Eventually(t, func() bool { return e.c.Queue().Len() == 1 }, 5*time.Second, time.Millisecond)
	})
}

// TestPodBecomingReadyRequeuesAfterMinReadySeconds: the pod's update wakes
// the owner now, and that sync schedules the availability check. (The
// handler's own delayed add coalesces into the immediate one: ctrlkit's
// queue never runs an item twice for an Add plus a later AddAfter.)
func TestPodBecomingReadyRequeuesAfterMinReadySeconds(t *testing.T) {
	forBothKinds(t, func(t *testing.T, k testKind) {
		clk := clocktesting.NewFakeClock(time.Now())
		o := k.newOwner(1, fooBar)
		switch x := o.(type) {
		case *appsv1.ReplicaSet:
			x.Spec.MinReadySeconds = 5
		case *v1.ReplicationController:
			x.Spec.MinReadySeconds = 5
		}
		e := newEnvWithOwner(t, k, o, podset.WithClock(clk))
		notReady := newPod("pod", o, k, v1.PodPending, fooBar, true)
		ready := newPod("pod", o, k, v1.PodRunning, fooBar, true)
		ready.UID, ready.ResourceVersion = notReady.UID, "2"
		ready.Status.Conditions[0].LastTransitionTime = metav1.NewTime(clk.Now())
		e.addPods(ready)
		e.c.ChildEventHandler().OnUpdate(notReady, ready)
		require.Equal(t, 1, e.c.Queue().Len())
		require.True(t, e.c.ProcessNextWorkItem(e.ctx))
		require.Zero(t, e.c.Queue().Len())
		clk.Step(5 * time.Second)
		require.Eventually(t, func() bool { return e.c.Queue().Len() == 1 }, 5*time.Second, time.Millisecond)
	})
}
