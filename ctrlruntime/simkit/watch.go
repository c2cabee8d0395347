package simkit

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// convertingWatch hands on a watch's events with their objects converted
// into an informer's form. Unlike apimachinery's watch.Filter, its
// goroutine never outlives Stop, even when nobody reads the last event.
type convertingWatch struct {
	source  watch.Interface
	convert func(runtime.Object) (runtime.Object, error)
	result  chan watch.Event
	done    chan struct{}
	exited  chan struct{}
	once    sync.Once
}

func newConvertingWatch(source watch.Interface, convert func(runtime.Object) (runtime.Object, error)) *convertingWatch {
	w := &convertingWatch{source: source, convert: convert, result: make(chan watch.Event),
		done: make(chan struct{}), exited: make(chan struct{})}
	go w.relay()
	return w
}

func (w *convertingWatch) relay() {
	defer close(w.exited)
	defer close(w.result)
	for {
		var e watch.Event
		select {
		case <-w.done:
			return
		case got, ok := <-w.source.ResultChan():
			if !ok {
				return
			}
			e = got
		}
		if e.Type != watch.Error && e.Type != watch.Bookmark {
			if obj, err := w.convert(e.Object); err == nil {
				e.Object = obj
			} else {
				e = watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}}
			}
		}
		select {
		case w.result <- e:
		case <-w.done:
			return
		}
	}
}

// ResultChan implements watch.Interface.
func (w *convertingWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop stops the source and returns once the relay goroutine has exited.
func (w *convertingWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.source.Stop()
	})
	<-w.exited
}
