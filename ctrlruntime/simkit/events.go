package simkit

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// events records a manager's core/v1 events into the simulated cluster,
// where a test can list them, instead of sending them to no server and
// logging each failure. Its broadcaster starts with the first recorder
// asked for and stops when the manager does; a manager asked for a
// recorder must be started and stopped, as any test's is.
type events struct {
	kit *Kit

	mu          sync.Mutex
	broadcaster record.EventBroadcaster
	stopped     bool
}

// recorderFor returns a recorder for the event source component name.
func (e *events) recorderFor(name string) record.EventRecorder {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		// The manager has stopped: nothing would shut a new broadcaster
		// down again.
		return &record.FakeRecorder{}
	}
	if e.broadcaster == nil {
		e.broadcaster = record.NewBroadcaster()
		e.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: e.kit.cluster.Client().CoreV1().Events("")})
	}
	return e.broadcaster.NewRecorder(e.kit.scheme, corev1.EventSource{Component: name})
}

// stopWith shuts the broadcaster down once ctx is done: a manager runs it
// as a Runnable, so it ends with the manager.
func (e *events) stopWith(ctx context.Context) error {
	<-ctx.Done()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
	if e.broadcaster != nil {
		e.broadcaster.Shutdown()
	}
	return nil
}
