package scenarios

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// The control plane shared by the scenarios that do not need one of their
// own. It starts with the first scenario that asks for it, so a run of only
// the fault scenarios (which start their own) does not pay for it.
var (
	env       *kubetest.Env
	envOnce   sync.Once
	envErr    error
	envIgnore goleak.Option
)

func sharedEnv(t *testing.T) *kubetest.Env {
	t.Helper()
	envOnce.Do(func() {
		// The budget covers a cold build of kube-apiserver on a slow machine.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		env, envErr = kubetest.Start(ctx, kubetest.WithLogf(log.Printf))
		if envErr == nil {
			fmt.Printf("kubetest: control plane started in %s\n", env.StartDuration.Round(time.Millisecond))
		}
	})
	if envErr != nil {
		t.Fatalf("start control plane: %v", envErr)
	}
	return env
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	envIgnore = goleak.IgnoreCurrent()
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
			return 1
		}
	}
	// Each scenario checks its own goroutines; this checks the harness's.
	if err := goleak.Find(envIgnore); err != nil {
		fmt.Fprintf(os.Stderr, "goroutines left after the control plane stopped: %v\n", err)
		return 1
	}
	return code
}
