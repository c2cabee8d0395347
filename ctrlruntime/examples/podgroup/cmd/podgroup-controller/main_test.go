package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
)

// The manager is wired with leader election, the metrics endpoint and the
// controller; building it contacts no API server.
func TestNewManager(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	mgr, err := newManager(cfg, options{metricsAddr: "0", probeAddr: "0", leaderElect: true, leaseNamespace: "kube-system"})
	require.NoError(t, err)
	assert.NotNil(t, mgr.GetClient())

	_, err = newManager(cfg, options{metricsAddr: "0", probeAddr: "0", leaderElect: true})
	assert.Error(t, err, "outside a cluster the lease namespace must be given")
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
