package claim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRecheckDeletionTimestamp(t *testing.T) {
	errGet := errors.New("get failed")
	ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	deletingRC := controller("default", "1", false)
	deletingRC.DeletionTimestamp = &ts
	var nilRC *v1.ReplicationController
	tests := []struct {
		name    string
		get     func(context.Context) (metav1.Object, error)
		wantErr string
		wantIs  error
	}{
		{name: "live", get: func(context.Context) (metav1.Object, error) { return controller("default", "1", false), nil }},
		{name: "get error", get: func(context.Context) (metav1.Object, error) { return nil, errGet },
			wantErr: "can't recheck DeletionTimestamp: get failed", wantIs: errGet},
		{name: "being deleted", get: func(context.Context) (metav1.Object, error) { return deletingRC, nil },
			wantErr: "default/rc has just been deleted at " + ts.String()},
		{name: "nil getter", get: nil, wantErr: "getObject is nil"},
		{name: "nil object", get: func(context.Context) (metav1.Object, error) { return nil, nil }, wantIs: ErrNilObject},
		{name: "typed nil object", get: func(context.Context) (metav1.Object, error) { return nilRC, nil }, wantIs: ErrNilObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := RecheckDeletionTimestamp(tc.get)(context.Background())
			if tc.wantErr == "" && tc.wantIs == nil {
				assert.NoError(t, err)
				return
			}
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
			}
			if tc.wantIs != nil {
				assert.ErrorIs(t, err, tc.wantIs)
			}
		})
	}
}

// A manager whose CanAdopt is RecheckDeletionTimestamp refuses adoption for
// a controller deleted since the cache was filled.
func TestRecheckBlocksAdoption(t *testing.T) {
	cached := controller("default", "1", false)
	fresh := controller("default", "1", true)
	fpc := &fakePodPatcher{}
	m := NewPodControllerRefManager(fpc, cached, productionSelector, fakeKind,
		RecheckDeletionTimestamp(func(context.Context) (metav1.Object, error) { return fresh, nil }))
	claimed, err := m.ClaimPods(context.Background(), []*v1.Pod{newPod("a", productionLabel, nil)})
	assert.Empty(t, claimed)
	assert.ErrorContains(t, err, "can't adopt Pod default/a (uid-a): default/rc has just been deleted at")
	assert.Empty(t, fpc.Patches)
}
