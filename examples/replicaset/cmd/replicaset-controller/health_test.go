package main

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
	"go.uber.org/goleak"
)

// TestMetricsListenOnLoopbackByDefault: with no flags, /metrics listens on
// a loopback address, and on another port than the probes.
func TestMetricsListenOnLoopbackByDefault(t *testing.T) {
	var o options
	require.NoError(t, newFlagSet(&o, io.Discard).Parse(nil))
	host, port, err := net.SplitHostPort(o.metricsAddr)
	require.NoError(t, err, "--metrics-addr default %q", o.metricsAddr)
	ip := net.ParseIP(host)
	require.NotNil(t, ip, "the default metrics host %q is an IP, not a name that could resolve elsewhere", host)
	assert.True(t, ip.IsLoopback(), "the default metrics address %q is not loopback", o.metricsAddr)
	_, healthPort, err := net.SplitHostPort(o.healthAddr)
	require.NoError(t, err)
	assert.NotEqual(t, healthPort, port, "health and metrics default to the same port")
}

// TestMetricsNotServedOnTheHealthPort runs the binary's entry point with a
// health and a metrics address: the health port, which the probes (and so
// anyone who reaches the pod) can reach, answers /healthz and /readyz only;
// /metrics is served on the metrics port alone.
func TestMetricsNotServedOnTheHealthPort(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	health, metrics := freeLoopbackAddr(t), freeLoopbackAddr(t)
	drain := make(chan struct{})
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), drain, []string{"--demo=false", "--health-addr=" + health, "--metrics-addr=" + metrics}, io.Discard, io.Discard)
	}()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(url string) (int, string) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	require.Eventually(t, func() bool {
		code, _ := get("http://" + health + "/readyz")
		return code == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond, "/readyz on the health port")

	code, _ := get("http://" + health + "/metrics")
	assert.Equal(t, http.StatusNotFound, code, "/metrics on the health port")
	code, body := get("http://" + metrics + "/metrics")
	assert.Equal(t, http.StatusOK, code, "/metrics on the metrics port")
	assert.True(t, strings.Contains(body, "workqueue_depth"), "the metrics port serves the registry")
	for _, path := range []string{"/healthz", "/readyz"} {
		code, _ := get("http://" + metrics + path)
		assert.Equal(t, http.StatusNotFound, code, "%s on the metrics port", path)
	}

	close(drain)
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(20 * time.Second):
		t.Fatal("did not exit after the interrupt")
	}
}

// freeLoopbackAddr is a loopback host:port nobody listens on right now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}
