package replicaset

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/ctrlkit/ctrlkit/podset"
)

// trimPodsEnv, when set, makes every test of this package run on pods passed
// through podset.TrimPod: the env's pod informer transforms what it receives
// and addPods trims what it adds. TestControllerOnTrimmedPods sets it.
const trimPodsEnv = "CTRLKIT_TEST_TRIM_PODS"

var trimPods = os.Getenv(trimPodsEnv) != ""

// trimmedIfAsked is pod, or pod through podset.TrimPod when the suite runs on
// trimmed pods.
func trimmedIfAsked(t testing.TB, pod *v1.Pod) *v1.Pod {
	t.Helper()
	if !trimPods {
		return pod
	}
	out, err := podset.TrimPod(pod)
	require.NoError(t, err)
	return out.(*v1.Pod)
}

// TestControllerOnTrimmedPods runs this package's tests again, in a child
// process, on trimmed pods: if either controller read a field TrimPod drops,
// some decision would change and a test would fail.
func TestControllerOnTrimmedPods(t *testing.T) {
	if trimPods {
		t.Skip("already running on trimmed pods")
	}
	if testing.Short() {
		t.Skip("re-runs the whole package")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.count=1", "-test.run=.", "-test.skip=^(TestControllerOnTrimmedPods|Example.*)$")
	cmd.Env = append(os.Environ(), trimPodsEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the tests failed on trimmed pods:\n%s", out)
}
