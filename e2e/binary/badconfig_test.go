package binary

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// failFastBound is how long a misconfigured binary may take to give up: its
// client's timeout with room for a loaded machine.
const failFastBound = 60 * time.Second

// requireNoDemo fails if the process played the simulated demo.
func requireNoDemo(t testing.TB, p *controllerProcess) {
	t.Helper()
	require.NotContains(t, p.output(), "SIMULATED", "%s fell back to the simulated demo", p.name)
}

// TestUnreachableServer points --kubeconfig at a loopback port nobody
// listens on: the binary fails with a message naming the server and a
// non-zero exit, and never plays the demo.
func TestUnreachableServer(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	kubeconfig, err := shipped.writeKubeconfig(t.TempDir()+"/unreachable.kubeconfig", "https://"+addr, env.Config.CAData)
	require.NoError(t, err)
	p := startController(t, "controller", s.controllerArgs(kubeconfig)...)
	code := p.wait(t, failFastBound)
	t.Logf("exit code %d after %s", code, p.exitedAt.Sub(p.started).Round(time.Millisecond))
	require.NotZero(t, code)
	requireNoDemo(t, p)
	require.Contains(t, p.output(), addr, "the error does not name the unreachable server")
}

// TestInClusterWithoutToken runs the binary as in a pod whose service-account
// token is missing: a cluster is configured, so it must fail rather than
// play the demo.
func TestInClusterWithoutToken(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	port := strconv.Itoa(freePort(t))
	p := startControllerEnv(t, "controller",
		[]string{"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=" + port},
		"--namespace="+s.ns)
	code := p.wait(t, failFastBound)
	t.Logf("exit code %d after %s", code, p.exitedAt.Sub(p.started).Round(time.Millisecond))
	requireNoDemo(t, p)
	require.NotZero(t, code)
}

// missingPermission matches the apiserver's Forbidden message, which names
// the verb and the resource refused.
var missingPermission = regexp.MustCompile(`cannot (list|watch|get|create|update|patch|delete) resource "[a-z/]+"`)

// TestForbiddenToken runs the binary with a valid token for a ServiceAccount
// that no role is bound to: it fails with an error naming the permission it
// lacks, and a non-zero exit.
func TestForbiddenToken(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	const account = "ctrlkit-unbound"
	_, err := s.client.CoreV1().ServiceAccounts(s.ns).Create(s.ctx, newServiceAccount(account), metav1.CreateOptions{})
	require.NoError(t, err)
	id, err := newIdentity(s.ctx, s.ns, account, t.TempDir()+"/forbidden.kubeconfig")
	require.NoError(t, err)

	p := startController(t, "controller", s.controllerArgs(id.kubeconfig)...)
	code := p.wait(t, failFastBound)
	t.Logf("exit code %d after %s", code, p.exitedAt.Sub(p.started).Round(time.Millisecond))
	require.NotZero(t, code)
	requireNoDemo(t, p)
	out := p.output()
	require.Regexp(t, missingPermission, out, "the error does not name the missing permission")
	require.True(t, strings.Contains(out, id.user), "the error does not name the user %s", id.user)
}
