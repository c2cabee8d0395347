package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/examples/replicaset/cmd/replicaset-controller/internal/demo"
	"github.com/ctrlkit/ctrlkit/podranking"
)

// syncBuffer is a bytes.Buffer safe for the demo's concurrent printers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func demoOptions(kind replicaset.Kind) options {
	return options{
		kind: kind, workers: 5, burst: 500, qps: 20, apiBurst: 30, drainTimeout: 5 * time.Second,
		sim: simOptions{demo: true, delay: 20 * time.Millisecond, nodes: 3, timeout: 45 * time.Second},
	}
}

// demoSummary matches the demo's last line, read from /metrics.
var demoSummary = regexp.MustCompile(`metrics: \d+ syncs \(\d+ requeued to wait for the cache, (\d+) failed\), (\d+) pods created, (\d+) pods deleted, \d+ queue adds, \d+ retries, deletion-age ratio: .*`)

// TestDemo plays the whole scripted demo for each kind and checks what it
// proves: the owner settles at 5, every low-cost pod was deleted, and the
// controller explained those choices by deletion cost.
func TestDemo(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, kind := range []replicaset.Kind{replicaset.ReplicaSets, replicaset.ReplicationControllers} {
		t.Run(string(kind), func(t *testing.T) {
			var out syncBuffer
			start := time.Now()
			res, err := simulate(context.Background(), nil, demoOptions(kind), &out)
			require.NoError(t, err, out.String())
			assert.Less(t, time.Since(start), 30*time.Second)
			assert.True(t, res.Final.Settled())
			assert.Equal(t, int32(5), res.Final.Desired)
			assert.Equal(t, 5, res.Final.Pods)
			require.Len(t, res.Cheap, demo.LowCostPods)
			assert.True(t, res.CheapDeleted)

			byCost := map[string]bool{}
			for _, d := range res.decisions {
				for i, r := range d.Reasons {
					if r.Rule == podranking.RuleDeletionCost && r.AFirst() {
						byCost[d.Chosen[i].Name] = true
					}
				}
			}
			for _, name := range res.Cheap {
				assert.True(t, byCost[name], "pod %s chosen for its deletion cost", name)
			}
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				assert.True(t, strings.HasPrefix(line, "SIMULATED "), "every demo line is labelled: %q", line)
			}
			for _, want := range []string{"step 1/5", "step 2/5", "step 3/5", "step 4/5", "step 5/5", "lower deletion cost first", "done:"} {
				assert.Contains(t, out.String(), want)
			}

			// The summary's pod counts balance: every pod the controller
			// created was deleted by it, by hand (step 3's 10), or is one
			// of the 5 left; and it created at least 10 + 90 + 10.
			m := demoSummary.FindStringSubmatch(out.String())
			require.NotNil(t, m, "no metrics summary line in:\n%s", out.String())
			// Read-your-writes requeues are not failures; nothing fails
			// on the simulated cluster.
			assert.Equal(t, "0", m[1], "failed syncs: %s", m[0])
			created, err := strconv.Atoi(m[2])
			require.NoError(t, err)
			deleted, err := strconv.Atoi(m[3])
			require.NoError(t, err)
			assert.GreaterOrEqual(t, created, 110, m[0])
			assert.Equal(t, created, deleted+10+5, m[0])
		})
	}
}

// TestRunExitCodes drives the binary's entry point.
func TestRunExitCodes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // outside a cluster
	cases := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"help", []string{"--help"}, 0, ""},
		{"unknown flag", []string{"--nope"}, 2, ""},
		{"bad kind", []string{"--kind=deployment"}, 2, ""},
		{"bad workers", []string{"--workers=0"}, 2, ""},
		{"bad burst", []string{"--burst-replicas=-1"}, 2, ""},
		{"bad qps", []string{"--kube-api-qps=0"}, 2, ""},
		{"no request timeout", []string{"--kube-api-timeout=0"}, 2, ""},
		{"missing kubeconfig", []string{"--kubeconfig=/nonexistent/kubeconfig"}, 1, ""},
		{"simulated cluster with leader election", []string{"--leader-elect"}, 2, ""},
		{"simulated cluster with a ring", []string{"--shard-ring=r", "--shard-identity=a"}, 2, ""},
		{"ring and leader election", []string{"--shard-ring=r", "--shard-identity=a", "--leader-elect"}, 2, ""},
		{"ring by name", []string{"--shard-ring=r", "--shard-identity=a", "--shard-by=name"}, 2, ""},
		{"ring without identity", []string{"--shard-ring=r", "--shard-identity="}, 2, ""},
		{"ring lease too short", []string{"--shard-ring=r", "--shard-identity=a", "--shard-lease-duration=5s", "--shard-renew-interval=3s", "--shard-safety-margin=2s"}, 2, ""},
		{"ring lease in fractions", []string{"--shard-ring=r", "--shard-identity=a", "--shard-lease-duration=5500ms"}, 2, ""},
		{"demo with a ReplicationController", []string{"--kind=replicationcontroller", "--sim-startup-delay=10ms", "--health-addr=127.0.0.1:0", "--metrics-addr=127.0.0.1:0", "-v=0"}, 0, "ReplicationController"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out syncBuffer
			code := run(context.Background(), nil, tc.args, &out, io.Discard)
			assert.Equal(t, tc.code, code, out.String())
			assert.Contains(t, out.String(), tc.out)
		})
	}
}

// TestInterruptDrainsAndExitsZero: with --demo=false the simulated cluster
// idles until the first signal (drain closed), then drains and exits 0.
func TestInterruptDrainsAndExitsZero(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	drain := make(chan struct{})
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), drain, []string{"--demo=false", "--health-addr=", "--metrics-addr="}, &out, io.Discard)
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "runs idle") }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // let it start syncing
	close(drain)
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(20 * time.Second):
		t.Fatal("did not exit after the interrupt")
	}
}

// TestStoppedAtOnceExitsOne: run on a context already stopped at once (a
// second signal, see process.Signals) exits 1, promptly, even with a long
// drain timeout.
func TestStoppedAtOnceExitsOne(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, stopNow := context.WithCancel(context.Background())
	stopNow()
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	drain := make(chan struct{})
	close(drain) // the first signal
	var out syncBuffer
	start := time.Now()
	code := run(ctx, drain, []string{"--demo=false", "--health-addr=", "--metrics-addr=", "--drain-timeout=1h"}, &out, io.Discard)
	assert.Equal(t, 1, code)
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestRestConfigChoosesTheCluster(t *testing.T) {
	env := map[string]string{}
	o := options{qps: 7, apiBurst: 9, getenv: func(k string) string { return env[k] },
		inClusterCfg: func() (*rest.Config, error) { return nil, rest.ErrNotInCluster }}
	cfg, err := o.restConfig()
	require.NoError(t, err)
	assert.Nil(t, cfg, "no kubeconfig and not in a cluster: simulated")

	// In a pod whose config does not load (no service-account token): an
	// error, never the demo.
	env["KUBERNETES_SERVICE_HOST"] = "10.0.0.1"
	_, err = o.restConfig()
	require.ErrorIs(t, err, rest.ErrNotInCluster)

	o.inClusterCfg = func() (*rest.Config, error) { return &rest.Config{Host: "https://10.0.0.1"}, nil }
	cfg, err = o.restConfig()
	require.NoError(t, err)
	require.NotNil(t, cfg)
	assert.Equal(t, float32(7), cfg.QPS)
	assert.Equal(t, 9, cfg.Burst)
}
