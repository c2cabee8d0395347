package binary

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every scenario's overall bound; the slowest needs about a minute.
const scenarioTimeout = 4 * time.Minute

// requireNoForbidden fails if the controller was refused anything: a verb
// the controller uses that deploy/rbac-*.yaml does not grant shows up as a
// logged Forbidden error (an event, say) even when the scenario converges.
func requireNoForbidden(t testing.TB, p *controllerProcess) {
	t.Helper()
	for _, line := range strings.Split(p.output(), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("%s was refused a request under the shipped RBAC: %s", p.name, line)
		}
	}
}

// TestHappyPathReplicaSet runs the binary under the shipped identity: it
// turns ready once its caches have synced, is healthy, and scales a ReplicaSet to 50
// Pending pods with a correct status.
func TestHappyPathReplicaSet(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	pods := s.watchPods()
	p := startController(t, "controller", s.controllerArgs(shipped.kubeconfig)...)
	readyAt := p.waitReady(s.ctx, t)
	t.Logf("start to /readyz 200: %s", readyAt.Sub(p.started).Round(time.Millisecond))
	code, err := getStatus(s.ctx, &http.Client{Timeout: 2 * time.Second}, p.healthURL+"/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, "/healthz")

	pods.limit("web", 50)
	begin := time.Now()
	s.createReplicaSet("web", 50)
	s.waitFor("50 pods and their status", s.replicaSetSettled("web", 50, pods))
	t.Logf("ReplicaSet of 50 settled in %s", time.Since(begin).Round(time.Millisecond))

	sent := p.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.wait(t, 40*time.Second), "exit code after SIGTERM")
	t.Logf("SIGTERM to exit: %s", p.exitedAt.Sub(sent).Round(time.Millisecond))
	requireNoForbidden(t, p)
	require.Equal(t, 50, pods.maxSeen("web"))
}

// TestHappyPathReplicationController is the same with --kind=replicationcontroller.
func TestHappyPathReplicationController(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	pods := s.watchPods()
	p := startController(t, "controller", s.controllerArgs(shipped.kubeconfig, "--kind=replicationcontroller")...)
	readyAt := p.waitReady(s.ctx, t)
	t.Logf("start to /readyz 200: %s", readyAt.Sub(p.started).Round(time.Millisecond))

	pods.limit("web", 50)
	s.createReplicationController("web", 50)
	s.waitFor("50 pods and their status", s.replicationControllerSettled("web", 50, pods))

	p.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.wait(t, 40*time.Second), "exit code after SIGTERM")
	requireNoForbidden(t, p)
}
