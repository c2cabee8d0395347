package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// podWriteCounter is the controller's event recorder: it passes every event
// on, and counts the pods the controller created and deleted by the events
// podcontrol records once per successful write (SuccessfulCreate,
// SuccessfulDelete). The library has no pod-write metric of its own, and the
// events are exactly its record of those writes.
type podWriteCounter struct {
	next     record.EventRecorder
	metrics  *controllerMetrics
	ctrlName string // the controller label
}

var _ record.EventRecorder = podWriteCounter{}

// Event implements record.EventRecorder.
func (r podWriteCounter) Event(object runtime.Object, eventtype, reason, message string) {
	r.count(reason)
	r.next.Event(object, eventtype, reason, message)
}

// Eventf implements record.EventRecorder.
func (r podWriteCounter) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.count(reason)
	r.next.Eventf(object, eventtype, reason, messageFmt, args...)
}

// AnnotatedEventf implements record.EventRecorder.
func (r podWriteCounter) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.count(reason)
	r.next.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
}

func (r podWriteCounter) count(reason string) {
	switch reason {
	case podcontrol.SuccessfulCreatePodReason:
		r.metrics.podsCreated.WithLabelValues(r.ctrlName).Inc()
	case podcontrol.SuccessfulDeletePodReason:
		r.metrics.podsDeleted.WithLabelValues(r.ctrlName).Inc()
	}
}

// startEventRecorder (kind is the --kind value) starts what the controller would otherwise start for
// itself (a broadcaster writing events to the API server and logging them at
// V(3)) and returns its recorder, counting pod writes into m, and the
// broadcaster's stop.
func startEventRecorder(ctx context.Context, client kubernetes.Interface, kind string, m *controllerMetrics) (record.EventRecorder, func()) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartStructuredLogging(3)
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	rec := b.NewRecorder(scheme.Scheme, v1.EventSource{Component: kinds[kind].events})
	return podWriteCounter{next: rec, metrics: m, ctrlName: kind}, b.Shutdown
}
