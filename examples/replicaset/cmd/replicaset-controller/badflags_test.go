package main

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestRunRefusesUnusableSettings: settings the binary cannot honour stop it
// at start with exit 2 and a message naming the flag, before any cluster or
// demo starts. The previous code took a NaN or infinite QPS as given, ran on
// without metrics when --metrics-addr could not be served (logging only
// "Metrics server disabled"), and ignored --profiling without a metrics
// address.
func TestRunRefusesUnusableSettings(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // outside a cluster: the simulated demo
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"NaN qps", []string{"--kube-api-qps=NaN"}, "--kube-api-qps must be a positive finite number, not NaN"},
		{"infinite qps", []string{"--kube-api-qps=Inf"}, "--kube-api-qps must be a positive finite number, not +Inf"},
		{"negative infinite qps", []string{"--kube-api-qps=-Inf"}, "--kube-api-qps must be a positive finite number"},
		{"negative qps", []string{"--kube-api-qps=-1"}, "--kube-api-qps must be a positive finite number, not -1"},
		{"zero api burst", []string{"--kube-api-burst=0"}, "--kube-api-burst must be at least 1"},
		{"metrics port taken", []string{"--metrics-addr=" + taken.Addr().String()}, "--metrics-addr " + taken.Addr().String() + " is unusable"},
		{"metrics address without a port", []string{"--metrics-addr=localhost"}, "--metrics-addr: address localhost: missing port"},
		{"metrics port not a number", []string{"--metrics-addr=127.0.0.1:metrics"}, "--metrics-addr: address 127.0.0.1:metrics: the port must be a number"},
		{"metrics port out of range", []string{"--metrics-addr=127.0.0.1:70000"}, "the port must be a number from 0 to 65535"},
		{"metrics address of no local interface", []string{"--metrics-addr=192.0.2.1:0"}, "--metrics-addr 192.0.2.1:0 is unusable"},
		{"profiling without metrics", []string{"--profiling", "--metrics-addr="}, "--profiling serves Go's profiles on --metrics-addr, which is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut syncBuffer
			args := append([]string{"--health-addr=", "--sim-startup-delay=10ms"}, tc.args...)
			code := run(context.Background(), nil, args, &out, &errOut)
			assert.Equal(t, 2, code, "stderr: %s", errOut.String())
			assert.Contains(t, errOut.String(), tc.want)
			assert.NotContains(t, out.String(), "SIMULATED", "the demo started")
		})
	}

	// A usable address and profiling with it still start.
	var o options
	fs := newFlagSet(&o, nil)
	require.NoError(t, fs.Parse([]string{"--profiling", "--metrics-addr=127.0.0.1:0", "--kube-api-qps=0.5"}))
	assert.NoError(t, o.validate())
}
