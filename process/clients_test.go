package process

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// TestRequestTimeoutBoundsWritesNotWatches: against a server that never
// answers a write, and sends a watch's first event only after several
// request timeouts, the write fails after about the request timeout while
// the informers' watch still gets its event. The same timeout on the watch
// client would have cut that watch.
func TestRequestTimeoutBoundsWritesNotWatches(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const eventAfter = 4 * timeout
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Query().Get("watch") != "true" {
			// A write the server accepted and never answers.
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(eventAfter):
		case <-r.Context().Done():
			return
		}
		fmt.Fprintln(w, `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"late","namespace":"ns"}}}`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)

	cs, err := NewClients(&rest.Config{Host: srv.URL}, timeout)
	require.NoError(t, err)

	start := time.Now()
	_, err = cs.Requests.CoreV1().Pods("ns").Create(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
	require.Error(t, err, "a write that is never answered")
	assert.Less(t, time.Since(start), timeout+3*time.Second, "the write was not bounded by the request timeout")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gotEvent := func(c interface {
		Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	}) bool {
		w, err := c.Watch(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		defer w.Stop()
		ev, ok := <-w.ResultChan()
		return ok && ev.Type == watch.Added
	}
	assert.True(t, gotEvent(cs.Watches.CoreV1().Pods("ns")), "the informers' watch was cut before its first event")
	assert.False(t, gotEvent(cs.Requests.CoreV1().Pods("ns")), "the request timeout no longer cuts a watch: the informers could share the client")
}

// TestLeaseCallsHaveTheirOwnRateLimiter: with the controller's client rate
// limiter drained by a burst of writes, a Lease call still goes out at
// once. Sharing one limiter queued renewals behind the writes until the
// Lease lapsed.
func TestLeaseCallsHaveTheirOwnRateLimiter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}))
	defer srv.Close()
	// One request a second, no burst beyond it.
	cs, err := NewClients(&rest.Config{Host: srv.URL, QPS: 1, Burst: 1}, 10*time.Second)
	require.NoError(t, err)
	ctx := context.Background()
	for range 3 { // the controller's burst: the third waits about 2 s
		go func() { _ = cs.Requests.CoreV1().Pods("ns").Delete(ctx, "p", metav1.DeleteOptions{}) }()
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	_, err = cs.Leases.CoordinationV1().Leases("ns").Get(ctx, "l", metav1.GetOptions{})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 500*time.Millisecond, "a Lease call waited behind the controller's writes")
}
