package childset_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ctrlkit/ctrlkit/childset"
)

// DeploymentLayout reads a Deployment-shaped owner's rollout fields and
// writes its status only when a field it owns differs.
func TestDeploymentLayout(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "examples.ctrlkit.io", Version: "v1", Resource: "things"}
	owner := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "examples.ctrlkit.io/v1", "kind": "Thing",
		"metadata": map[string]any{"namespace": "ns", "name": "t"},
		"spec": map[string]any{
			"minReadySeconds": int64(5),
			"strategy":        map[string]any{"rollingUpdate": map[string]any{"maxSurge": "50%", "maxUnavailable": int64(1)}},
		},
		"status": map[string]any{"collisionCount": int64(2), "conditions": []any{"kept"}},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ThingList"}, owner.DeepCopy())
	l := childset.DeploymentLayout{Client: dyn, Resource: gvr}

	require.NoError(t, l.Check(owner))
	u, ok := l.RollingUpdate(owner)
	require.True(t, ok)
	assert.Equal(t, "50%", u.MaxSurge.String())
	assert.EqualValues(t, 10, l.RevisionHistoryLimit(owner), "absent: 10")
	assert.EqualValues(t, 5, l.MinReadySeconds(owner))
	assert.EqualValues(t, 2, *l.CollisionCount(owner))

	st := childset.Status{Replicas: 3, ReadyReplicas: 2, UpdateRevision: "t-abc", CollisionCount: 2}
	require.NoError(t, l.UpdateStatus(context.Background(), owner, st))
	patches := func() int {
		n := 0
		for _, a := range dyn.Actions() {
			if p, ok := a.(k8stesting.PatchAction); ok && p.GetSubresource() == "status" {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, patches())
	stored, err := dyn.Resource(gvr).Namespace("ns").Get(context.Background(), "t", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "t-abc", stored.Object["status"].(map[string]any)["updateRevision"])
	assert.Equal(t, []any{"kept"}, stored.Object["status"].(map[string]any)["conditions"], "fields others write are kept")

	require.NoError(t, l.UpdateStatus(context.Background(), stored, st))
	assert.Equal(t, 1, patches(), "an unchanged status is not written again")

	bad := owner.DeepCopy()
	bad.Object["spec"].(map[string]any)["minReadySeconds"] = "soon"
	assert.ErrorContains(t, l.Check(bad), "minReadySeconds")
	assert.ErrorContains(t, childset.DeploymentLayout{}.UpdateStatus(context.Background(), owner, st), "no Client")
}
