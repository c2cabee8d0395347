package crclient

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// PodControl is podcontrol's pod control over a controller-runtime client:
// the same pod built from the template, the same checks, events, event
// reasons, NotFound handling, named creates (CreatePodWithName) and
// deadlines as podcontrol.NewRealPodControl, since it is the same code over
// another writer.
type PodControl = podcontrol.RealPodControl

// Option configures NewPodControl: podcontrol's options, such as
// podcontrol.WithEventReasons, podcontrol.WithNotFoundAsSuccess,
// and podcontrol.WithWriteTimeout.
type Option = podcontrol.Option

// NewPodControl returns a PodControl writing through c and recording events
// through recorder; a nil recorder records nothing. c must not be nil.
func NewPodControl(c client.Client, recorder record.EventRecorder, opts ...Option) *PodControl {
	return podcontrol.NewPodControl(NewWriter[*corev1.Pod](c), recorder, opts...)
}

// NewObjectControl returns an objectcontrol.Control for objects of type T
// (kind names them in messages) writing through c, with the events and
// rules of objectcontrol.New. patchType is what Patch sends:
// types.StrategicMergePatchType for built-in kinds, types.MergePatchType for
// custom resources.
func NewObjectControl[T client.Object](c client.Client, kind string, recorder record.EventRecorder, patchType types.PatchType, opts ...objectcontrol.Option) *objectcontrol.Control[T] {
	return objectcontrol.New(kind, NewWriter[T](c), recorder, patchType, opts...)
}
