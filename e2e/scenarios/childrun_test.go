package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// runUntilCleanup runs run(ctx) in a goroutine; the cleanup cancels ctx,
// waits for run to return and then calls each shutdown.
func (s *scenario) runUntilCleanup(ctx context.Context, cancel context.CancelFunc, run func(context.Context) error, shutdown ...func()) {
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	s.t.Cleanup(func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				s.t.Errorf("controller Run: %v", err)
			}
			for _, f := range shutdown {
				f()
			}
		})
	})
}

// warningRecorder is a record.EventRecorder that keeps the Warning events.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (r *warningRecorder) Event(_ runtime.Object, eventType, reason, message string) {
	if eventType != corev1.EventTypeWarning {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, reason+": "+message)
}

func (r *warningRecorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

func (r *warningRecorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	r.Eventf(obj, eventType, reason, format, args...)
}

func (r *warningRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.warnings)
}
