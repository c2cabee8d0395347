package prommetrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ctrlkit/ctrlkit/shard"
)

// TestRegisterRunner: the ring's figures are read from the Runner when
// scraped: before the member runs it holds nothing and no list was made.
func TestRegisterRunner(t *testing.T) {
	m, err := shard.NewMember(fake.NewClientset().CoordinationV1(), "kube-system", "ring", "replica-0",
		shard.WithRenewInterval(time.Second))
	require.NoError(t, err)
	r := shard.NewRunner(m, func(context.Context, *shard.Epoch) (*shard.Work, error) { return nil, nil })
	reg := prometheus.NewRegistry()
	require.NoError(t, RegisterRunner(reg, r))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Equal(t, 9, n)
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		s := f.GetMetric()[0]
		got[f.GetName()] = s.GetGauge().GetValue() + s.GetCounter().GetValue()
	}
	assert.Equal(t, 0.0, got["ctrlkit_shard_held_fraction"])
	assert.Equal(t, -1.0, got["ctrlkit_shard_server_filtered"], "before the first list")
	assert.Equal(t, 0.0, got["ctrlkit_shard_restarts_total"])
	require.Error(t, RegisterRunner(reg, r), "registered twice")
}
