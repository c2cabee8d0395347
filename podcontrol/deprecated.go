package podcontrol

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
)

// The controls for kinds other than pods moved to package objectcontrol.
// These names keep working for one release.

// TypedClient is objectcontrol.TypedClient.
//
// Deprecated: use objectcontrol.TypedClient.
type TypedClient[T runtime.Object] = objectcontrol.TypedClient[T]

// ObjectControl is objectcontrol.Interface.
//
// Deprecated: use objectcontrol.Interface.
type ObjectControl[T metav1.Object] = objectcontrol.Interface[T]

// RealObjectControl is objectcontrol.Control.
//
// Deprecated: use objectcontrol.Control.
type RealObjectControl[T objectcontrol.Object] = objectcontrol.Control[T]

// FakeObjectControl is objectcontrol.Fake.
//
// Deprecated: use objectcontrol.Fake.
type FakeObjectControl[T objectcontrol.Object] = objectcontrol.Fake[T]

// NewObjectControl is objectcontrol.New over objectcontrol.TypedWriter(clientFor).
//
// Deprecated: use objectcontrol.New.
func NewObjectControl[T objectcontrol.Object](kind string, clientFor func(namespace string) TypedClient[T], recorder record.EventRecorder, patchType types.PatchType, opts ...Option) *RealObjectControl[T] {
	return objectcontrol.New(kind, objectcontrol.TypedWriter(clientFor), recorder, patchType, opts...)
}
