package childset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// DeploymentLayout is the rolling-update half of a Spec for an owner read
// as unstructured content and laid out as a Deployment or StatefulSet is:
// spec.strategy.rollingUpdate (maxSurge, maxUnavailable, partition),
// spec.revisionHistoryLimit (absent: 10), spec.minReadySeconds and the
// status fields of Status. Embed it beside the Spec's own methods to
// implement RolloutSpec, MinReadySpec and StatusSpec, and call Check from
// NewChild, so a malformed field is refused with a Warning event before
// anything is written.
type DeploymentLayout struct {
	// Client writes the status subresource of Resource.
	Client   dynamic.Interface
	Resource schema.GroupVersionResource
}

// Check reports the first malformed rolling-update field of owner.
func (DeploymentLayout) Check(owner *unstructured.Unstructured) error {
	if _, err := NestedRollingUpdate(owner.Object, "spec", "strategy", "rollingUpdate"); err != nil {
		return err
	}
	for _, field := range []string{"revisionHistoryLimit", "minReadySeconds"} {
		if _, err := NestedReplicas(owner.Object, 0, "spec", field); err != nil {
			return err
		}
	}
	return nil
}

// RollingUpdate implements RolloutSpec: spec.strategy.rollingUpdate, whose
// absence is maxSurge and maxUnavailable 25%, as for a Deployment.
func (DeploymentLayout) RollingUpdate(owner *unstructured.Unstructured) (RollingUpdate, bool) {
	u, err := NestedRollingUpdate(owner.Object, "spec", "strategy", "rollingUpdate")
	return u, err == nil
}

// RevisionHistoryLimit implements RolloutSpec: spec.revisionHistoryLimit,
// 10 when absent.
func (DeploymentLayout) RevisionHistoryLimit(owner *unstructured.Unstructured) int32 {
	n, _ := NestedReplicas(owner.Object, 10, "spec", "revisionHistoryLimit")
	return n
}

// CollisionCount implements RolloutSpec: status.collisionCount, which
// UpdateStatus writes.
func (DeploymentLayout) CollisionCount(owner *unstructured.Unstructured) *int32 {
	n, _ := NestedReplicas(owner.Object, 0, "status", "collisionCount")
	return &n
}

// MinReadySeconds implements MinReadySpec: spec.minReadySeconds; absent or
// malformed is 0.
func (DeploymentLayout) MinReadySeconds(owner *unstructured.Unstructured) int32 {
	n, _ := NestedReplicas(owner.Object, 0, "spec", "minReadySeconds")
	return n
}

// UpdateStatus implements StatusSpec: it merge-patches the status
// subresource when one of Status's fields differs; fields others write are
// kept.
func (l DeploymentLayout) UpdateStatus(ctx context.Context, owner *unstructured.Unstructured, st Status) error {
	status := map[string]any{
		"replicas": int64(st.Replicas), "readyReplicas": int64(st.ReadyReplicas),
		"availableReplicas": int64(st.AvailableReplicas), "updatedReplicas": int64(st.UpdatedReplicas),
		"currentRevision": st.CurrentRevision, "updateRevision": st.UpdateRevision,
		"collisionCount": int64(st.CollisionCount), "observedGeneration": st.ObservedGeneration,
	}
	old, _, _ := unstructured.NestedMap(owner.Object, "status")
	merged := maps.Clone(old)
	if merged == nil {
		merged = map[string]any{}
	}
	if maps.Copy(merged, status); reflect.DeepEqual(merged, old) {
		return nil
	}
	if l.Client == nil {
		return errors.New("childset: DeploymentLayout: no Client to write the status with")
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("childset: the status of %s: %w", owner.GetName(), err)
	}
	_, err = l.Client.Resource(l.Resource).Namespace(owner.GetNamespace()).Patch(ctx, owner.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
