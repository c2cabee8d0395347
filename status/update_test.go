package status

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// callLog counts the API calls a fake clientset sees, and the status each
// status update carried.
type callLog struct {
	mu      sync.Mutex
	gets    int
	updates int
	other   []string
	sent    []runtime.Object
}

func (l *callLog) snapshot() (gets, updates int, other []string, sent []runtime.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gets, l.updates, append([]string(nil), l.other...), append([]runtime.Object(nil), l.sent...)
}

// faults says which calls the fake clientset fails.
type faults struct {
	failUpdates int   // the first failUpdates status updates fail with updateErr
	updateErr   error // defaults to a plain error
	getErr      error // every GET fails with it when set
	getBumpsGen bool  // the GET answer carries a newer generation and resourceVersion
}

// kindCase drives the same update scenarios through one workload kind.
type kindCase[O metav1.Object] struct {
	resource string
	newObj   func(gen, observedGen int64, replicas int32) O
	update   func(ctx context.Context, cs *fake.Clientset, obj O, replicas int32) (O, error)
	replicas func(O) int32
	observed func(O) int64
}

var rsKindCase = kindCase[*appsv1.ReplicaSet]{
	resource: "replicasets",
	newObj: func(gen, observedGen int64, replicas int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "foobar", Namespace: "default", Generation: gen, ResourceVersion: "18"},
			Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1)},
			Status:     appsv1.ReplicaSetStatus{Replicas: replicas, ObservedGeneration: observedGen},
		}
	},
	update: func(ctx context.Context, cs *fake.Clientset, rs *appsv1.ReplicaSet, replicas int32) (*appsv1.ReplicaSet, error) {
		st := rs.Status
		st.Replicas = replicas
		return UpdateReplicaSetStatus(ctx, cs.AppsV1().ReplicaSets(rs.Namespace), rs, st)
	},
	replicas: func(rs *appsv1.ReplicaSet) int32 { return rs.Status.Replicas },
	observed: func(rs *appsv1.ReplicaSet) int64 { return rs.Status.ObservedGeneration },
}

var rcKindCase = kindCase[*v1.ReplicationController]{
	resource: "replicationcontrollers",
	newObj: func(gen, observedGen int64, replicas int32) *v1.ReplicationController {
		return &v1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: "foobar", Namespace: "default", Generation: gen, ResourceVersion: "18"},
			Spec:       v1.ReplicationControllerSpec{Replicas: ptr.To[int32](1)},
			Status:     v1.ReplicationControllerStatus{Replicas: replicas, ObservedGeneration: observedGen},
		}
	},
	update: func(ctx context.Context, cs *fake.Clientset, rc *v1.ReplicationController, replicas int32) (*v1.ReplicationController, error) {
		st := rc.Status
		st.Replicas = replicas
		return UpdateReplicationControllerStatus(ctx, cs.CoreV1().ReplicationControllers(rc.Namespace), rc, st)
	},
	replicas: func(rc *v1.ReplicationController) int32 { return rc.Status.Replicas },
	observed: func(rc *v1.ReplicationController) int64 { return rc.Status.ObservedGeneration },
}

// newFakeClient seeds a fake clientset with obj and installs a counting
// reactor in front of fault-injecting ones.
func newFakeClient(obj runtime.Object, resource string, f faults) (*fake.Clientset, *callLog) {
	cs := fake.NewClientset(obj)
	log := &callLog{}
	updates := 0
	cs.PrependReactor("update", resource, func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		updates++
		if updates <= f.failUpdates {
			if f.updateErr != nil {
				return true, nil, f.updateErr
			}
			return true, nil, errors.New("fake update error")
		}
		return false, nil, nil
	})
	cs.PrependReactor("get", resource, func(a clienttesting.Action) (bool, runtime.Object, error) {
		if f.getErr != nil {
			return true, nil, f.getErr
		}
		if !f.getBumpsGen {
			return false, nil, nil
		}
		fresh, err := cs.Tracker().Get(a.GetResource(), a.GetNamespace(), a.(clienttesting.GetAction).GetName())
		if err != nil {
			return true, nil, err
		}
		m, _ := fresh.(metav1.Object)
		m.SetGeneration(m.GetGeneration() + 5)
		return true, fresh, nil
	})
	cs.PrependReactor("*", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		log.mu.Lock()
		defer log.mu.Unlock()
		switch act := a.(type) {
		case clienttesting.GetAction:
			log.gets++
		case clienttesting.UpdateAction:
			if a.GetSubresource() == "status" {
				log.updates++
				log.sent = append(log.sent, act.GetObject().DeepCopyObject())
				return false, nil, nil
			}
			log.other = append(log.other, a.GetVerb())
		default:
			log.other = append(log.other, a.GetVerb())
		}
		return false, nil, nil
	})
	return cs, log
}

func TestUpdateStatus(t *testing.T) {
	t.Run("ReplicaSet", func(t *testing.T) { runUpdateScenarios(t, rsKindCase) })
	t.Run("ReplicationController", func(t *testing.T) { runUpdateScenarios(t, rcKindCase) })
}

func runUpdateScenarios[O metav1.Object](t *testing.T, k kindCase[O]) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: k.resource}, "foobar", errors.New("stale"))
	getErr := apierrors.NewServiceUnavailable("etcd is sad")
	tests := []struct {
		name                  string
		gen, observedGen      int64
		oldReplicas, replicas int32
		faults                faults
		cancelled             bool

		wantGets, wantUpdates int
		wantErr               error // errors.Is target; nil means success
		wantConflict          bool
		wantSameObject        bool // steady state returns the caller's pointer
		wantObserved          int64
	}{
		{name: "steady state makes no call", gen: 3, observedGen: 3, oldReplicas: 2, replicas: 2,
			wantSameObject: true, wantObserved: 3},
		{name: "new generation with equal counts is written", gen: 4, observedGen: 3, oldReplicas: 2, replicas: 2,
			wantUpdates: 1, wantObserved: 4},
		{name: "changed replicas are written", gen: 3, observedGen: 3, oldReplicas: 2, replicas: 5,
			wantUpdates: 1, wantObserved: 3},
		{name: "every update fails: one GET, two UPDATEs", gen: 2, observedGen: 1, oldReplicas: 1, replicas: 10,
			faults: faults{failUpdates: 100}, wantGets: 1, wantUpdates: 2, wantErr: errAny, wantObserved: 2},
		{name: "retry keeps the generation acted on", gen: 2, observedGen: 1, oldReplicas: 1, replicas: 10,
			faults: faults{failUpdates: 100, getBumpsGen: true}, wantGets: 1, wantUpdates: 2, wantErr: errAny, wantObserved: 2},
		{name: "conflict then success", gen: 2, observedGen: 2, oldReplicas: 1, replicas: 3,
			faults: faults{failUpdates: 1, updateErr: conflict}, wantGets: 1, wantUpdates: 2, wantObserved: 2},
		{name: "conflict twice is returned as a conflict", gen: 2, observedGen: 2, oldReplicas: 1, replicas: 3,
			faults: faults{failUpdates: 2, updateErr: conflict}, wantGets: 1, wantUpdates: 2, wantErr: conflict, wantConflict: true, wantObserved: 2},
		{name: "GET failure ends the retry with the GET error", gen: 2, observedGen: 2, oldReplicas: 1, replicas: 3,
			faults: faults{failUpdates: 1, getErr: getErr}, wantGets: 1, wantUpdates: 1, wantErr: getErr, wantObserved: 2},
		{name: "cancelled context makes no call", gen: 2, observedGen: 2, oldReplicas: 1, replicas: 3,
			cancelled: true, wantErr: context.Canceled, wantObserved: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := k.newObj(tc.gen, tc.observedGen, tc.oldReplicas)
			cs, log := newFakeClient(any(obj).(runtime.Object), k.resource, tc.faults)
			before := any(obj).(runtime.Object).DeepCopyObject()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}

			got, err := k.update(ctx, cs, obj, tc.replicas)

			gets, updates, other, sent := log.snapshot()
			assert.Equal(t, tc.wantGets, gets, "GETs")
			assert.Equal(t, tc.wantUpdates, updates, "status UPDATEs")
			assert.Empty(t, other, "no other calls")
			assert.Equal(t, before, any(obj).(runtime.Object), "the caller's object is not modified")
			for i, s := range sent {
				o := s.(O)
				assert.Equal(t, tc.replicas, k.replicas(o), "update %d carries the new status", i)
				assert.Equal(t, tc.wantObserved, k.observed(o), "update %d observedGeneration", i)
			}
			switch {
			case tc.wantErr == nil:
				require.NoError(t, err)
				if tc.wantSameObject {
					assert.Same(t, any(obj), any(got))
				} else {
					assert.Equal(t, tc.replicas, k.replicas(got))
					assert.Equal(t, tc.wantObserved, k.observed(got))
				}
			case tc.wantErr == errAny:
				require.Error(t, err)
				var zero O
				assert.Equal(t, zero, got)
			default:
				require.ErrorIs(t, err, tc.wantErr)
				var zero O
				assert.Equal(t, zero, got)
			}
			assert.Equal(t, tc.wantConflict, apierrors.IsConflict(err), "IsConflict")
		})
	}
}

// errAny marks a case that must fail without caring about the error's identity.
var errAny = errors.New("any error")

// TestUpdateReplicaSetStatusSteadyState pins the short-circuit decision table:
// every field it compares, and the ones it must treat as different.
func TestUpdateReplicaSetStatusSteadyState(t *testing.T) {
	failure := appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: v1.ConditionTrue, Reason: ReasonFailedCreate}
	base := appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1,
		TerminatingReplicas: ptr.To[int32](1), ObservedGeneration: 7, Conditions: []appsv1.ReplicaSetCondition{failure}}
	tests := []struct {
		name     string
		gen      int64
		mutate   func(*appsv1.ReplicaSetStatus)
		wantCall bool
	}{
		{name: "identical", gen: 7, mutate: func(*appsv1.ReplicaSetStatus) {}},
		{name: "equal terminating count behind another pointer", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.TerminatingReplicas = ptr.To[int32](1) }},
		{name: "observedGeneration in newStatus is ignored", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.ObservedGeneration = 1 }},
		{name: "generation not yet observed", gen: 8, mutate: func(*appsv1.ReplicaSetStatus) {}, wantCall: true},
		{name: "replicas", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.Replicas++ }, wantCall: true},
		{name: "fullyLabeledReplicas", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.FullyLabeledReplicas++ }, wantCall: true},
		{name: "readyReplicas", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.ReadyReplicas++ }, wantCall: true},
		{name: "availableReplicas", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.AvailableReplicas++ }, wantCall: true},
		{name: "terminatingReplicas value", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.TerminatingReplicas = ptr.To[int32](2) }, wantCall: true},
		{name: "terminatingReplicas nil", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.TerminatingReplicas = nil }, wantCall: true},
		{name: "condition message", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) {
			s.Conditions = []appsv1.ReplicaSetCondition{failure}
			s.Conditions[0].Message = "other"
		}, wantCall: true},
		{name: "conditions removed", gen: 7, mutate: func(s *appsv1.ReplicaSetStatus) { s.Conditions = nil }, wantCall: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := rsKindCase.newObj(tc.gen, 7, 0)
			rs.Status = *base.DeepCopy()
			cs, log := newFakeClient(rs, "replicasets", faults{})
			next := *base.DeepCopy()
			tc.mutate(&next)

			got, err := UpdateReplicaSetStatus(context.Background(), cs.AppsV1().ReplicaSets("default"), rs, next)
			require.NoError(t, err)
			_, updates, _, _ := log.snapshot()
			if !tc.wantCall {
				assert.Zero(t, updates)
				assert.Same(t, rs, got)
				return
			}
			assert.Equal(t, 1, updates)
			assert.Equal(t, tc.gen, got.Status.ObservedGeneration)
		})
	}
}

// TestUpdateStatusNilVersusEmptyConditions: like upstream's DeepEqual, nil and
// empty condition lists differ, for both kinds.
func TestUpdateStatusNilVersusEmptyConditions(t *testing.T) {
	rs := rsKindCase.newObj(1, 1, 1)
	cs, log := newFakeClient(rs, "replicasets", faults{})
	next := rs.Status
	next.Conditions = []appsv1.ReplicaSetCondition{}
	_, err := UpdateReplicaSetStatus(context.Background(), cs.AppsV1().ReplicaSets("default"), rs, next)
	require.NoError(t, err)
	_, updates, _, _ := log.snapshot()
	assert.Equal(t, 1, updates)

	rc := rcKindCase.newObj(1, 1, 1)
	cs, log = newFakeClient(rc, "replicationcontrollers", faults{})
	nextRC := rc.Status
	nextRC.Conditions = []v1.ReplicationControllerCondition{}
	_, err = UpdateReplicationControllerStatus(context.Background(), cs.CoreV1().ReplicationControllers("default"), rc, nextRC)
	require.NoError(t, err)
	_, updates, _, _ = log.snapshot()
	assert.Equal(t, 1, updates)
}
