package podset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/clock"
)

// TestOptionsPanicOnImpossibleValues: a value that can never be right is a
// programmer error, reported at the With* call with the option's name.
func TestOptionsPanicOnImpossibleValues(t *testing.T) {
	for name, build := range map[string]func(){
		"WithBurstReplicas":         func() { WithBurstReplicas(0) },
		"WithWorkers":               func() { WithWorkers(-1) },
		"WithDrainTimeout":          func() { WithDrainTimeout(-time.Second) },
		"WithWriteTimeout":          func() { WithWriteTimeout(0) },
		"WithNames":                 func() { WithNames("", "c") },
		"WithReadYourWritesTTL":     func() { WithReadYourWritesTTL(0) },
		"WithStaleCachePoll":        func() { WithStaleCachePoll(-time.Second) },
		"WithUnreachableBackoffCap": func() { WithUnreachableBackoffCap(0) },
	} {
		assert.Contains(t, panicMessage(t, build), "podset: "+name+": ", name)
	}
	assert.Panics(t, func() { WithWriteTimeout(-time.Second) })
}

func panicMessage(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "no panic")
		msg, _ = r.(string)
	}()
	f()
	return ""
}

// TestOptionsNilMeansDefault: nil interface and function values keep the
// documented defaults, and a nil Option is skipped.
func TestOptionsNilMeansDefault(t *testing.T) {
	cfg := newConfig(nil)
	for _, o := range []Option{
		WithClock(nil), WithEventRecorder(nil), WithMetricsProvider(nil), WithPodControl(nil),
		WithScaleDownReporter(nil), WithFeatureGates(nil), WithMetrics(nil),
	} {
		o(&cfg)
	}
	assert.Equal(t, clock.RealClock{}, cfg.clock)
	assert.Nil(t, cfg.recorder)
	assert.Nil(t, cfg.metrics)
	assert.Nil(t, cfg.podControl)
	assert.Nil(t, cfg.onScaleDown)
	assert.Nil(t, cfg.syncMetrics)
	require.NotNil(t, cfg.gates)
	assert.True(t, cfg.gates(PodDeletionCost))

	WithWriteTimeout(time.Second)(&cfg)
	assert.Equal(t, time.Second, cfg.writeTimeout)
	assert.Equal(t, DefaultWriteTimeout, newConfig(nil).writeTimeout)

	e := newEnv(t, nil, nil, WithWorkers(2))
	assert.Equal(t, 2, e.c.cfg.workers)
}
