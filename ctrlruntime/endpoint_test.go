package ctrlruntime_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ctrlkit/ctrlkit/ctrlruntime"
)

// The queue's series are served by the metrics server a manager runs, read
// back over HTTP.
func TestQueueMetricsServedOnMetricsEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	srv, err := metricsserver.NewServer(metricsserver.Options{BindAddress: addr}, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	q := ctrlruntime.NewTypedQueue[string]("endpoint-check", nil)
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	var body string
	require.Eventually(t, func() bool {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err == nil && resp.StatusCode == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond)
	assert.Contains(t, body, `workqueue_adds_total{controller="endpoint-check",name="endpoint-check"} 2`)
	assert.Contains(t, body, `workqueue_depth{controller="endpoint-check",name="endpoint-check",priority=""} 2`)
	assert.Equal(t, 1, strings.Count(body, "# TYPE workqueue_adds_total counter"), "one family, shared with controller-runtime's queues")
}
