package process

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// StartEvents starts what a controller records its events through: a
// broadcaster that writes them to the API server through client and logs
// them at V(3), and a recorder on it whose events name component. A binary
// starts it itself to wrap the recorder (to count what it records, say)
// before handing it to the controller. Call stop when the controller has
// stopped; the broadcaster's goroutines also end with ctx.
func StartEvents(ctx context.Context, client kubernetes.Interface, component string) (recorder record.EventRecorder, stop func()) {
	if ctx == nil || client == nil {
		panic("process: StartEvents: nil context or client")
	}
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartStructuredLogging(3)
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, v1.EventSource{Component: component}), b.Shutdown
}
