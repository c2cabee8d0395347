package claim

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
