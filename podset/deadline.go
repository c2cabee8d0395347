package podset

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ctrlkit/ctrlkit/internal/unsure"
	"github.com/ctrlkit/ctrlkit/objectcontrol"
	"github.com/ctrlkit/ctrlkit/podcontrol"
)

// withinDeadline runs call with a context that ends after timeout and
// returns what call returns. If call has not returned when that context
// ends, withinDeadline returns at once with an error wrapping the context's
// (context.DeadlineExceeded, or the parent's cancellation) and abandons
// call: a pod control or Kind that ignores its context cannot pin the owner
// in its sync forever. The abandoned call keeps its goroutine until it
// returns, and what it returns then is dropped, as an API answer lost on
// the network would be.
func withinDeadline[T any](ctx context.Context, timeout time.Duration, what string, call func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	// Buffered, so an abandoned call's goroutine never blocks on sending.
	done := make(chan result, 1)
	go func() {
		v, err := call(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("%s: no answer within %v: %w", what, timeout, context.Cause(ctx))
	}
}

// deadlinePodControl runs every call of a PodControl within the write
// timeout (see withinDeadline).
type deadlinePodControl struct {
	pc      podcontrol.PodControl
	timeout time.Duration
}

var _ podcontrol.PodControl = deadlinePodControl{}

// bounded runs one write within the timeout.
func (d deadlinePodControl) bounded(ctx context.Context, what string, write func(context.Context) error) error {
	_, err := withinDeadline(ctx, d.timeout, what, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, write(ctx)
	})
	return err
}

func (d deadlinePodControl) CreatePods(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	return d.bounded(ctx, "creating a pod in "+namespace, func(ctx context.Context) error {
		return d.pc.CreatePods(ctx, namespace, template, object, controllerRef)
	})
}

func (d deadlinePodControl) CreatePodsWithGenerateName(ctx context.Context, namespace string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference, generateName string) error {
	return d.bounded(ctx, "creating a pod in "+namespace, func(ctx context.Context) error {
		return d.pc.CreatePodsWithGenerateName(ctx, namespace, template, object, controllerRef, generateName)
	})
}

func (d deadlinePodControl) DeletePod(ctx context.Context, namespace, podID string, object runtime.Object) error {
	return d.deleteAll(ctx, namespace, []string{podID}, object)[0]
}

// deleteAll deletes the named pods of namespace in parallel, one goroutine
// per pod as upstream deletes them, and returns each delete's error in the
// order of names. The deletes share one deadline, the timeout from the
// moment they all start: a context and a waiting goroutine per delete would
// cost more than many a delete to a fast API server. When the deadline
// passes first, deleteAll returns at once with a deadline error for each
// delete still unanswered, whose call it abandons as withinDeadline does:
// what that call returns later is dropped.
func (d deadlinePodControl) deleteAll(ctx context.Context, namespace string, names []string, object runtime.Object) []error {
	if len(names) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	errs := make([]error, len(names))
	answered := make([]bool, len(names))
	var (
		mu          sync.Mutex // guards errs, answered, unanswered and abandoned
		unanswered  = len(names)
		abandoned   bool
		allAnswered = make(chan struct{})
	)
	for i, name := range names {
		go func() {
			err := d.pc.DeletePod(ctx, namespace, name, object)
			mu.Lock()
			defer mu.Unlock()
			if abandoned {
				return
			}
			errs[i], answered[i] = err, true
			if unanswered--; unanswered == 0 {
				close(allAnswered)
			}
		}()
	}
	select {
	case <-allAnswered:
		return errs
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	abandoned = true
	for i, name := range names {
		if !answered[i] {
			errs[i] = fmt.Errorf("deleting pod %s/%s: no answer within %v: %w", namespace, name, d.timeout, context.Cause(ctx))
		}
	}
	return errs
}

func (d deadlinePodControl) PatchPod(ctx context.Context, namespace, name string, data []byte) error {
	return d.bounded(ctx, "patching pod "+namespace+"/"+name, func(ctx context.Context) error {
		return d.pc.PatchPod(ctx, namespace, name, data)
	})
}

// namePrefix is the generateName of the pods created from template for
// object when the pod control can create by name
// (podcontrol.NamedPodCreator), and "" otherwise.
func (d deadlinePodControl) namePrefix(template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) string {
	if _, ok := d.pc.(podcontrol.NamedPodCreator); !ok {
		return ""
	}
	pod, err := podcontrol.GetPodFromTemplate(template, object, controllerRef)
	if err != nil {
		// CreatePods refuses the same input with this error.
		return ""
	}
	return pod.GenerateName
}

// createPod creates a pod from template and returns its name. With a
// prefix (namePrefix), the name is chosen here: the prefix and a random
// suffix, as the API server's generateName would give. Choosing it lets a
// create of unknown outcome be sent again without creating a second pod
// (see resolveUnknown). Without one, the pod control generates the name
// and createPod returns "".
func (d deadlinePodControl) createPod(ctx context.Context, namespace, prefix string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) (string, error) {
	if prefix == "" {
		return "", d.CreatePods(ctx, namespace, template, object, controllerRef)
	}
	name := unsure.Name(prefix)
	return name, d.createPodNamed(ctx, namespace, name, template, object, controllerRef)
}

// createPodNamed creates the pod called name; the pod control must be a
// podcontrol.NamedPodCreator.
func (d deadlinePodControl) createPodNamed(ctx context.Context, namespace, name string, template *v1.PodTemplateSpec, object runtime.Object, controllerRef *metav1.OwnerReference) error {
	named, ok := d.pc.(podcontrol.NamedPodCreator)
	if !ok {
		return fmt.Errorf("%w: the pod control cannot create pod %s/%s by name", objectcontrol.ErrNotSent, namespace, name)
	}
	return d.bounded(ctx, "creating pod "+namespace+"/"+name, func(ctx context.Context) error {
		return named.CreatePodWithName(ctx, namespace, name, template, object, controllerRef)
	})
}
