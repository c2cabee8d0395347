package simcluster

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// relayWatcher is one open watch. Writes queue events without ever blocking
// (the queue has no bound) and a goroutine hands them to the reader, so a
// reader that falls behind delays only itself. client-go's fake watcher
// instead panics from inside the write once 100 events are unread.
type relayWatcher struct {
	gvr       schema.GroupVersionResource
	namespace string // "" watches every namespace

	result chan watch.Event
	wake   chan struct{}
	done   chan struct{}
	exited chan struct{}

	mu    sync.Mutex
	queue []watch.Event
	// While holding, events wait in held instead of queue; release moves
	// them to queue in order (Cluster.HoldWatches).
	holding bool
	held    []watch.Event

	stopOnce   sync.Once
	unregister func(*relayWatcher)
}

func newRelayWatcher(gvr schema.GroupVersionResource, namespace string, unregister func(*relayWatcher)) *relayWatcher {
	w := &relayWatcher{
		gvr:        gvr,
		namespace:  namespace,
		result:     make(chan watch.Event),
		wake:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		exited:     make(chan struct{}),
		unregister: unregister,
	}
	go w.relay()
	return w
}

// wants reports whether an event for an object of gvr in namespace belongs
// to this watch.
func (w *relayWatcher) wants(gvr schema.GroupVersionResource, namespace string) bool {
	return w.gvr == gvr && (w.namespace == "" || w.namespace == namespace)
}

// push queues an event, or holds it back while the watch is holding; it
// never blocks.
func (w *relayWatcher) push(eventType watch.EventType, obj runtime.Object) {
	e := watch.Event{Type: eventType, Object: obj.DeepCopyObject()}
	w.mu.Lock()
	if w.holding {
		w.held = append(w.held, e)
		w.mu.Unlock()
		return
	}
	w.queue = append(w.queue, e)
	w.mu.Unlock()
	w.wakeUp()
}

// hold makes later events wait until release.
func (w *relayWatcher) hold() {
	w.mu.Lock()
	w.holding = true
	w.mu.Unlock()
}

// release sends the held events, in the order they were pushed, after
// whatever was queued before the hold, and stops holding.
func (w *relayWatcher) release() {
	w.mu.Lock()
	w.holding = false
	w.queue = append(w.queue, w.held...)
	w.held = nil
	w.mu.Unlock()
	w.wakeUp()
}

func (w *relayWatcher) wakeUp() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *relayWatcher) relay() {
	defer close(w.exited)
	defer close(w.result)
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-w.wake:
				continue
			case <-w.done:
				return
			}
		}
		for _, e := range batch {
			select {
			case w.result <- e:
			case <-w.done:
				return
			}
		}
	}
}

// Stop ends the watch: no further event is sent, ResultChan is closed and the
// relay goroutine has exited when Stop returns. It may be called more than
// once.
func (w *relayWatcher) Stop() {
	w.stopOnce.Do(func() {
		w.unregister(w)
		close(w.done)
	})
	<-w.exited
}

// stopLocked ends a watch that was never registered, while the tracker's
// lock is held.
func (w *relayWatcher) stopLocked() {
	w.stopOnce.Do(func() { close(w.done) })
	<-w.exited
}

// ResultChan implements watch.Interface.
func (w *relayWatcher) ResultChan() <-chan watch.Event { return w.result }
