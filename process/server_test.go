package process

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestHealthHandler(t *testing.T) {
	var ready atomic.Bool
	s, err := Serve(context.Background(), "127.0.0.1:0", HealthHandler(nil, func() error {
		if !ready.Load() {
			return io.ErrUnexpectedEOF
		}
		return nil
	}))
	require.NoError(t, err)
	defer s.Stop()
	code, _ := get(t, "http://"+s.Addr()+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get(t, "http://"+s.Addr()+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	ready.Store(true)
	code, _ = get(t, "http://"+s.Addr()+"/readyz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get(t, "http://"+s.Addr()+"/metrics")
	assert.Equal(t, http.StatusNotFound, code, "the health handler serves nothing else")
	// A taken port is an error, not a panic.
	_, err = Serve(context.Background(), s.Addr(), http.NotFoundHandler())
	require.Error(t, err)
}

// TestProfilesOnlyWithProfiling: /debug/pprof/ is served with profiling and
// not without; a heap profile asked with gc=1 reports the heap after a
// collection, which is how the ring benchmark reads a process's live heap.
func TestProfilesOnlyWithProfiling(t *testing.T) {
	for _, profiling := range []bool{false, true} {
		s, err := Serve(context.Background(), "127.0.0.1:0", MetricsHandler(http.NotFoundHandler(), profiling))
		require.NoError(t, err)
		code, body := get(t, "http://"+s.Addr()+"/debug/pprof/heap?gc=1&debug=1")
		s.Stop()
		if !profiling {
			assert.Equal(t, http.StatusNotFound, code, "profiles served without profiling")
			continue
		}
		assert.Equal(t, http.StatusOK, code)
		assert.Contains(t, body, "# HeapAlloc = ", "the heap profile reports the heap in use")
	}
}

// TestServeStopsWithItsContext: the server's goroutine ends with its
// context, and Stop after that returns at once.
func TestServeStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Serve(ctx, "127.0.0.1:0", http.NotFoundHandler())
	require.NoError(t, err)
	cancel()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server outlived its context")
	}
	s.Stop()
	s.Stop()
}

func TestCheckAddr(t *testing.T) {
	for addr, want := range map[string]string{
		"localhost":         "address localhost: missing port in address",
		"127.0.0.1:metrics": `address 127.0.0.1:metrics: the port must be a number from 0 to 65535, not "metrics"`,
		"127.0.0.1:70000":   `address 127.0.0.1:70000: the port must be a number from 0 to 65535, not "70000"`,
	} {
		assert.EqualError(t, CheckAddr(addr), want, addr)
	}
	assert.NoError(t, CheckAddr("127.0.0.1:0"))
	assert.NoError(t, CheckAddr("192.0.2.1:0"), "whether it can be bound is CanListen's to say")
}

func TestCanListen(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	assert.ErrorContains(t, CanListen(taken.Addr().String()), "address already in use")
	assert.Error(t, CanListen("192.0.2.1:0"), "an address of no local interface")
	assert.NoError(t, CanListen("127.0.0.1:0"))
}
