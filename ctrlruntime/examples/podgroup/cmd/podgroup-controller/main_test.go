package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/ctrlkit/ctrlkit/ctrlruntime/examples/podgroup"
)

// The manager is wired with leader election, the metrics endpoint and the
// controller; building it asks the API server nothing beyond the
// RESTMapper's discovery, here a static mapper.
func TestNewManager(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	static := func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
		m := meta.NewDefaultRESTMapper(nil)
		m.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
		m.Add(podgroup.GroupVersionKind, meta.RESTScopeNamespace)
		return m, nil
	}
	mgr, err := newManager(cfg, options{metricsAddr: "0", probeAddr: "0", leaderElect: true, leaseNamespace: "kube-system", mapper: static})
	require.NoError(t, err)
	assert.NotNil(t, mgr.GetClient())

	_, err = newManager(cfg, options{metricsAddr: "0", probeAddr: "0", leaderElect: true, mapper: static})
	assert.Error(t, err, "outside a cluster the lease namespace must be given")
	_, err = newManager(cfg, options{metricsAddr: "0", probeAddr: "0"})
	assert.ErrorContains(t, err, "connection refused", "without a mapper, setup asks the API server's discovery")
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
