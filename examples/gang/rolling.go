package gang

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/podstate"
)

// This file is the code a user adds to adapter.go for rolling updates:
// RollingGangs (childset.RolloutSpec, MinReadySpec and StatusSpec) and
// Pods' ReadySince. doc.go states its size.

// RollingGangs is Gangs with rolling updates (spec.strategy.rollingUpdate,
// spec.revisionHistoryLimit, spec.minReadySeconds) and a status written
// through Client's status subresource.
type RollingGangs struct {
	Gangs
	Client dynamic.Interface
}

// NewChild is Gangs', after checking the rollout fields: a malformed one
// is refused with a Warning event (TemplateInvalid) and nothing is written.
func (g RollingGangs) NewChild(gang *unstructured.Unstructured) (*v1.Pod, error) {
	if _, err := childset.NestedRollingUpdate(gang.Object, "spec", "strategy", "rollingUpdate"); err != nil {
		return nil, err
	}
	for _, field := range []string{"revisionHistoryLimit", "minReadySeconds"} {
		if _, err := childset.NestedReplicas(gang.Object, 0, "spec", field); err != nil {
			return nil, err
		}
	}
	return g.Gangs.NewChild(gang)
}

// RollingUpdate reads spec.strategy.rollingUpdate; absent is maxSurge and
// maxUnavailable 25%, as for a Deployment.
func (RollingGangs) RollingUpdate(gang *unstructured.Unstructured) (childset.RollingUpdate, bool) {
	u, err := childset.NestedRollingUpdate(gang.Object, "spec", "strategy", "rollingUpdate")
	return u, err == nil
}

// RevisionHistoryLimit reads spec.revisionHistoryLimit; absent is 10.
func (RollingGangs) RevisionHistoryLimit(gang *unstructured.Unstructured) int32 {
	n, _ := childset.NestedReplicas(gang.Object, 10, "spec", "revisionHistoryLimit")
	return n
}

// MinReadySeconds reads spec.minReadySeconds; absent or malformed is 0.
func (RollingGangs) MinReadySeconds(gang *unstructured.Unstructured) int32 {
	n, _ := childset.NestedReplicas(gang.Object, 0, "spec", "minReadySeconds")
	return n
}

// CollisionCount reads status.collisionCount, which UpdateStatus writes.
func (RollingGangs) CollisionCount(gang *unstructured.Unstructured) *int32 {
	n, _ := childset.NestedReplicas(gang.Object, 0, "status", "collisionCount")
	return &n
}

// UpdateStatus merge-patches the status subresource when a field differs.
func (g RollingGangs) UpdateStatus(ctx context.Context, gang *unstructured.Unstructured, st childset.Status) error {
	status := map[string]any{
		"replicas": int64(st.Replicas), "readyReplicas": int64(st.ReadyReplicas),
		"availableReplicas": int64(st.AvailableReplicas), "updatedReplicas": int64(st.UpdatedReplicas),
		"currentRevision": st.CurrentRevision, "updateRevision": st.UpdateRevision,
		"collisionCount": int64(st.CollisionCount), "observedGeneration": st.ObservedGeneration,
	}
	// Fields others write are kept, and compared as they are.
	old, _, _ := unstructured.NestedMap(gang.Object, "status")
	merged := map[string]any{}
	maps.Copy(merged, old)
	if maps.Copy(merged, status); reflect.DeepEqual(merged, old) {
		return nil
	}
	if g.Client == nil {
		return fmt.Errorf("gang status: no Client to write it with")
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("gang status: %w", err)
	}
	_, err = g.Client.Resource(Resource).Namespace(gang.GetNamespace()).Patch(ctx, gang.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// ReadySince is when the pod's Ready condition last became true.
func (Pods) ReadySince(pod *v1.Pod) time.Time { return podstate.ReadyTime(pod).Time }
