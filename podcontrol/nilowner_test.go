package podcontrol

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// An owner that is a typed nil pointer in a runtime.Object is bad data, not
// a programmer error the library could have caught: every write refuses it
// with ErrNilOwner and calls no API. The previous code read its name through
// meta.Accessor, which returns the nil pointer without error, and panicked.
func TestRealPodControlRefusesTypedNilOwner(t *testing.T) {
	ctx := context.Background()
	var owner runtime.Object = (*appsv1.ReplicaSet)(nil)
	ref := metav1.NewControllerRef(controller("default", "123", false), fakeKind)
	client := fake.NewClientset(newPod("p", productionLabel, nil))
	rec := record.NewFakeRecorder(10)
	pc := NewRealPodControl(client, rec)
	client.ClearActions()

	for name, write := range map[string]func() error{
		"DeletePod":  func() error { return pc.DeletePod(ctx, "default", "p", owner) },
		"CreatePods": func() error { return pc.CreatePods(ctx, "default", podTemplate(), owner, ref) },
		"CreatePodsWithGenerateName": func() error {
			return pc.CreatePodsWithGenerateName(ctx, "default", podTemplate(), owner, ref, "x-")
		},
		"CreatePodWithName": func() error { return pc.CreatePodWithName(ctx, "default", "n", podTemplate(), owner, ref) },
	} {
		var err error
		assert.NotPanics(t, func() { err = write() }, name)
		assert.ErrorIs(t, err, objectcontrol.ErrNilOwner, name)
		assert.ErrorContains(t, err, "*v1.ReplicaSet", name)
	}
	assert.Empty(t, client.Actions(), "no API call for a nil owner")
	assert.Empty(t, drain(rec))

	_, err := GetPodFromTemplate(podTemplate(), owner, ref)
	assert.ErrorIs(t, err, objectcontrol.ErrNilOwner)
}
