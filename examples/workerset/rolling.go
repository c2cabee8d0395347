package workerset

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ctrlkit/ctrlkit/childset"
)

// This file is the code a user adds to adapter.go for rolling updates:
// RollingSet (childset.RolloutSpec, MinReadySpec and StatusSpec) and
// Workers' ReadySince. doc.go states its size.

// RollingSet is Set with rolling updates (spec.strategy.rollingUpdate,
// spec.revisionHistoryLimit, spec.minReadySeconds) and a status written
// through Client's status subresource.
type RollingSet struct {
	Set
	Client dynamic.Interface
}

// NewChild is Set's, after checking the rollout fields: a malformed one is
// refused with a Warning event (TemplateInvalid) and nothing is written.
func (s RollingSet) NewChild(set *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, err := childset.NestedRollingUpdate(set.Object, "spec", "strategy", "rollingUpdate"); err != nil {
		return nil, err
	}
	for _, field := range []string{"revisionHistoryLimit", "minReadySeconds"} {
		if _, err := childset.NestedReplicas(set.Object, 0, "spec", field); err != nil {
			return nil, err
		}
	}
	return s.Set.NewChild(set)
}

// RollingUpdate reads spec.strategy.rollingUpdate; absent is maxSurge and
// maxUnavailable 25%, as for a Deployment.
func (RollingSet) RollingUpdate(set *unstructured.Unstructured) (childset.RollingUpdate, bool) {
	u, err := childset.NestedRollingUpdate(set.Object, "spec", "strategy", "rollingUpdate")
	return u, err == nil
}

// RevisionHistoryLimit reads spec.revisionHistoryLimit; absent is 10.
func (RollingSet) RevisionHistoryLimit(set *unstructured.Unstructured) int32 {
	n, _ := childset.NestedReplicas(set.Object, 10, "spec", "revisionHistoryLimit")
	return n
}

// MinReadySeconds reads spec.minReadySeconds; absent or malformed is 0.
func (RollingSet) MinReadySeconds(set *unstructured.Unstructured) int32 {
	n, _ := childset.NestedReplicas(set.Object, 0, "spec", "minReadySeconds")
	return n
}

// CollisionCount reads status.collisionCount, which UpdateStatus writes.
func (RollingSet) CollisionCount(set *unstructured.Unstructured) *int32 {
	n, _ := childset.NestedReplicas(set.Object, 0, "status", "collisionCount")
	return &n
}

// UpdateStatus merge-patches the status subresource when a field differs.
func (s RollingSet) UpdateStatus(ctx context.Context, set *unstructured.Unstructured, st childset.Status) error {
	status := map[string]any{
		"replicas": int64(st.Replicas), "readyReplicas": int64(st.ReadyReplicas),
		"availableReplicas": int64(st.AvailableReplicas), "updatedReplicas": int64(st.UpdatedReplicas),
		"currentRevision": st.CurrentRevision, "updateRevision": st.UpdateRevision,
		"collisionCount": int64(st.CollisionCount), "observedGeneration": st.ObservedGeneration,
	}
	// Fields others write are kept, and compared as they are.
	old, _, _ := unstructured.NestedMap(set.Object, "status")
	merged := map[string]any{}
	maps.Copy(merged, old)
	if maps.Copy(merged, status); reflect.DeepEqual(merged, old) {
		return nil
	}
	if s.Client == nil {
		return fmt.Errorf("WorkerSet status: no Client to write it with")
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("WorkerSet status: %w", err)
	}
	_, err = s.Client.Resource(SetResource).Namespace(set.GetNamespace()).Patch(ctx, set.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// ReadySince reads status.readySince (RFC 3339), which whoever marks the
// Worker ready sets; absent or malformed is the zero time.
func (Workers) ReadySince(worker *unstructured.Unstructured) time.Time {
	s, _, _ := unstructured.NestedString(worker.Object, "status", "readySince")
	t, _ := time.Parse(time.RFC3339, s)
	return t
}
