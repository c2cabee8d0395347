package scenarios

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// env is the control plane shared by every scenario of the package.
var env *kubetest.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The budget covers a cold build of kube-apiserver on a slow machine.
	ignore := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var err error
	env, err = kubetest.Start(ctx, kubetest.WithLogf(log.Printf))
	if err != nil {
		fmt.Fprintf(os.Stderr, "start control plane: %v\n", err)
		return 1
	}
	fmt.Printf("kubetest: control plane started in %s\n", env.StartDuration.Round(time.Millisecond))
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		return 1
	}
	// Each scenario checks its own goroutines; this checks the harness's.
	if err := goleak.Find(ignore); err != nil {
		fmt.Fprintf(os.Stderr, "goroutines left after the control plane stopped: %v\n", err)
		return 1
	}
	return code
}
