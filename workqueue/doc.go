// Package workqueue is a generic work queue for controllers: a dirty set and a
// processing set that guarantee an item is never handled by two workers at
// once, plus delayed adds, rate-limited retries, rate limiters and metrics.
//
// It is a drop-in replacement for k8s.io/client-go/util/workqueue's typed
// queues.
package workqueue
