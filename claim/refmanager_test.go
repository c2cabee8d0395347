package claim

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestClaimObjectDecisionTable covers rows A to H of the upstream decision
// table, with the outcomes of adopt and release.
func TestClaimObjectDecisionTable(t *testing.T) {
	errBoom := errors.New("boom")
	ours := controller("default", "123", false)
	oursDeleting := controller("default", "123", true)
	other := controller("default", "AAAAA", false)
	clusterScoped := controller("", "123", false)

	tests := []struct {
		name        string
		row         string
		ctrl        *v1.ReplicationController
		obj         *v1.Pod
		match       bool
		adoptErr    error
		releaseErr  error
		wantOwned   bool
		wantErr     error
		wantAdopt   int
		wantRelease int
	}{
		{row: "A", name: "owned by another controller", ctrl: ours, obj: newPod("p", productionLabel, other), match: true},
		{row: "A", name: "owned by another, no match", ctrl: ours, obj: newPod("p", productionLabel, other)},
		{row: "B", name: "ours and matching", ctrl: ours, obj: newPod("p", productionLabel, ours), match: true, wantOwned: true},
		{row: "B", name: "ours and matching while we are deleted", ctrl: oursDeleting, obj: newPod("p", productionLabel, ours), match: true, wantOwned: true},
		{row: "B", name: "ours and matching while it is deleted", ctrl: ours, obj: deleting(newPod("p", productionLabel, ours)), match: true, wantOwned: true},
		{row: "C", name: "ours, no match, we are deleted", ctrl: oursDeleting, obj: newPod("p", testingLabel, ours)},
		{row: "D", name: "ours, no match: released", ctrl: ours, obj: newPod("p", testingLabel, ours), wantRelease: 1},
		{row: "D", name: "release NotFound ignored", ctrl: ours, obj: newPod("p", testingLabel, ours), releaseErr: notFound("p"), wantRelease: 1},
		{row: "D", name: "release error returned", ctrl: ours, obj: newPod("p", testingLabel, ours), releaseErr: errBoom, wantErr: errBoom, wantRelease: 1},
		{row: "E", name: "orphan while we are deleted", ctrl: oursDeleting, obj: newPod("p", productionLabel, nil), match: true},
		{row: "E", name: "orphan not matching", ctrl: ours, obj: newPod("p", testingLabel, nil)},
		{row: "F", name: "orphan being deleted", ctrl: ours, obj: deleting(newPod("p", productionLabel, nil)), match: true},
		{row: "G", name: "orphan in another namespace", ctrl: ours, obj: withNS(newPod("p", productionLabel, nil), "other"), match: true},
		{row: "H", name: "orphan adopted", ctrl: ours, obj: newPod("p", productionLabel, nil), match: true, wantOwned: true, wantAdopt: 1},
		{row: "H", name: "cluster-scoped adopts across namespaces", ctrl: clusterScoped, obj: withNS(newPod("p", productionLabel, nil), "other"), match: true, wantOwned: true, wantAdopt: 1},
		{row: "H", name: "adopt NotFound ignored", ctrl: ours, obj: newPod("p", productionLabel, nil), match: true, adoptErr: notFound("p"), wantAdopt: 1},
		{row: "H", name: "adopt error returned", ctrl: ours, obj: newPod("p", productionLabel, nil), match: true, adoptErr: errBoom, wantErr: errBoom, wantAdopt: 1},
		{row: "H", name: "adopt Invalid returned", ctrl: ours, obj: newPod("p", productionLabel, nil), match: true, adoptErr: invalid("p"), wantErr: invalid("p"), wantAdopt: 1},
	}
	for _, tc := range tests {
		t.Run(tc.row+"/"+tc.name, func(t *testing.T) {
			m := &BaseControllerRefManager{Controller: tc.ctrl, Selector: labels.Everything()}
			var adopts, releases int
			owned, err := m.ClaimObject(context.Background(), tc.obj,
				func(metav1.Object) bool { return tc.match },
				func(context.Context, metav1.Object) error { adopts++; return tc.adoptErr },
				func(context.Context, metav1.Object) error { releases++; return tc.releaseErr })
			assert.Equal(t, tc.wantOwned, owned, "owned")
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.Equal(t, tc.wantErr.Error(), err.Error())
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.wantAdopt, adopts, "adopt calls")
			assert.Equal(t, tc.wantRelease, releases, "release calls")
		})
	}
}

func TestCanAdoptRunsOnce(t *testing.T) {
	errNo := errors.New("no")
	tests := []struct {
		name string
		fn   func(context.Context) error
		want error
	}{
		{name: "nil func allows", fn: nil, want: nil},
		{name: "success cached", fn: func(context.Context) error { return nil }, want: nil},
		{name: "error cached", fn: func(context.Context) error { return errNo }, want: errNo},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			m := &BaseControllerRefManager{}
			if tc.fn != nil {
				m.CanAdoptFunc = func(ctx context.Context) error { calls.Add(1); return tc.fn(ctx) }
			}
			for range 3 {
				assert.Equal(t, tc.want, m.CanAdopt(context.Background()))
			}
			if tc.fn != nil {
				assert.Equal(t, int32(1), calls.Load())
			}
		})
	}
}

func TestCanAdoptOnlyWhenAdopting(t *testing.T) {
	var calls atomic.Int32
	fpc := &fakePodPatcher{}
	ctrl := controller("default", "123", false)
	m := NewPodControllerRefManager(fpc, ctrl, productionSelector, fakeKind,
		func(context.Context) error { calls.Add(1); return nil })
	// Nothing to adopt: CanAdopt is never asked.
	_, err := m.ClaimPods(context.Background(), []*v1.Pod{newPod("a", productionLabel, ctrl), newPod("b", testingLabel, nil)})
	require.NoError(t, err)
	assert.Zero(t, calls.Load())
	// Three orphans: asked once.
	_, err = m.ClaimPods(context.Background(), []*v1.Pod{newPod("c", productionLabel, nil), newPod("d", productionLabel, nil), newPod("e", productionLabel, nil)})
	require.NoError(t, err)
	assert.Equal(t, int32(1), calls.Load())
	assert.Len(t, fpc.Patches, 3)
}

func TestClaimObjectBadInput(t *testing.T) {
	ctx := context.Background()
	match := func(metav1.Object) bool { return true }
	noop := func(context.Context, metav1.Object) error { return nil }
	var nilRC *v1.ReplicationController
	var nilPod *v1.Pod
	tests := []struct {
		name    string
		m       *BaseControllerRefManager
		obj     metav1.Object
		match   func(metav1.Object) bool
		adopt   func(context.Context, metav1.Object) error
		release func(context.Context, metav1.Object) error
		owned   bool
		err     error
	}{
		{name: "nil controller", m: &BaseControllerRefManager{}, obj: newPod("p", productionLabel, nil), match: match, adopt: noop, release: noop, err: ErrNilController},
		{name: "typed nil controller", m: &BaseControllerRefManager{Controller: nilRC}, obj: newPod("p", productionLabel, nil), match: match, adopt: noop, release: noop, err: ErrNilController},
		{name: "nil object", m: &BaseControllerRefManager{Controller: controller("default", "1", false)}, obj: nil, match: match, adopt: noop, release: noop, err: ErrNilObject},
		{name: "typed nil object", m: &BaseControllerRefManager{Controller: controller("default", "1", false)}, obj: nilPod, match: match, adopt: noop, release: noop, err: ErrNilObject},
		{name: "nil match matches nothing", m: &BaseControllerRefManager{Controller: controller("default", "1", false)}, obj: newPod("p", productionLabel, nil), adopt: noop, release: noop},
		{name: "nil adopt", m: &BaseControllerRefManager{Controller: controller("default", "1", false)}, obj: newPod("p", productionLabel, nil), match: match, err: ErrNoPatcher},
		{name: "nil release", m: &BaseControllerRefManager{Controller: controller("default", "1", false)}, obj: newPod("p", productionLabel, controller("default", "1", false)), err: ErrNoPatcher},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			owned, err := tc.m.ClaimObject(ctx, tc.obj, tc.match, tc.adopt, tc.release)
			assert.Equal(t, tc.owned, owned)
			assert.ErrorIs(t, err, tc.err)
			if tc.err == nil {
				assert.NoError(t, err)
			}
		})
	}
}

func TestIsNil(t *testing.T) {
	var p *v1.Pod
	var m map[string]string
	assert.True(t, isNil(nil))
	assert.True(t, isNil(p))
	assert.True(t, isNil(m))
	assert.False(t, isNil(&v1.Pod{}))
	assert.False(t, isNil(3))
}

func TestNilManagers(t *testing.T) {
	ctx := context.Background()
	pod := newPod("p", productionLabel, nil)
	var pm *PodControllerRefManager
	_, err := pm.ClaimPods(ctx, []*v1.Pod{pod})
	assert.ErrorIs(t, err, ErrNilController)
	assert.ErrorIs(t, pm.AdoptPod(ctx, pod), ErrNilController)
	assert.ErrorIs(t, pm.ReleasePod(ctx, pod), ErrNilController)

	var rm *ReplicaSetControllerRefManager
	rs := newRS("rs", "default", productionLabel, nil)
	_, err = rm.ClaimReplicaSets(ctx, []*appsv1.ReplicaSet{rs})
	assert.ErrorIs(t, err, ErrNilController)
	assert.ErrorIs(t, rm.AdoptReplicaSet(ctx, rs), ErrNilController)
	assert.ErrorIs(t, rm.ReleaseReplicaSet(ctx, rs), ErrNilController)

	var om *ObjectControllerRefManager[*v1.Pod]
	_, err = om.Claim(ctx, []*v1.Pod{pod})
	assert.ErrorIs(t, err, ErrNilController)
	assert.ErrorIs(t, om.Adopt(ctx, pod), ErrNilController)
	assert.ErrorIs(t, om.Release(ctx, pod), ErrNilController)
}
