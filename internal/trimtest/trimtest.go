// Package trimtest re-runs a package's controller tests on pods passed
// through an informer transform (podset.TrimPod): if the controller read a
// field the transform drops, some decision would change and a test would
// fail.
//
// A package's tests check Enabled and, when it is true, trim every pod they
// hand the controller (Pod); one test of the package calls RunPackage.
package trimtest

import (
	"os"
	"os/exec"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// env, when set, makes the tests of the process run on trimmed pods.
const env = "CTRLKIT_TEST_TRIM_PODS"

// Enabled reports whether this test process runs on trimmed pods.
func Enabled() bool { return os.Getenv(env) != "" }

// Pod returns pod, or pod through trim when Enabled.
func Pod(t testing.TB, pod *v1.Pod, trim cache.TransformFunc) *v1.Pod {
	t.Helper()
	if !Enabled() {
		return pod
	}
	out, err := trim(pod)
	if err != nil {
		t.Fatalf("trimming pod %s: %v", pod.Name, err)
	}
	return out.(*v1.Pod)
}

// RunPackage runs every test of the calling test binary again, but the
// caller and the examples, in a child process with Enabled true, and fails t
// with the child's output if any of them fails.
func RunPackage(t *testing.T) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.count=1", "-test.run=.",
		"-test.skip=^("+t.Name()+"|Example.*)$")
	cmd.Env = append(os.Environ(), env+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the tests failed on trimmed pods: %v\n%s", err, out)
	}
}
