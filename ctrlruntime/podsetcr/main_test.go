package podsetcr

import (
	"testing"

	"go.uber.org/goleak"
)

// From controller-runtime v0.24 on, asking a cache restricted to
// namespaces for an informer starts a goroutine of its own that waits for
// the namespaces' informers to sync, which they never do in a manager that
// is never started (TestCompleteAcceptsANamespaceRestrictedCache). It is
// controller-runtime's, not this package's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("sigs.k8s.io/controller-runtime/pkg/cache.newMultiNamespaceInformer.func1"))
}
