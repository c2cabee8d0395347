package e2e

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// env is the control plane shared by the package's scenarios.
var env *kubetest.Env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	// controller-runtime warns, from a goroutine, when its global logger
	// is used unset; the scenarios give the manager its own.
	ctrl.SetLogger(logr.Discard())
	ignore := goleak.IgnoreCurrent()
	// The e2e module pins the kube-apiserver and etcd that kubetest builds.
	moduleDir, err := filepath.Abs(filepath.Join("..", "..", "e2e"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The budget covers a cold build of kube-apiserver on a slow machine.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	env, err = kubetest.Start(ctx, kubetest.WithModuleDir(moduleDir), kubetest.WithLogf(log.Printf))
	cancel()
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
	if err := goleak.Find(ignore); err != nil {
		fmt.Fprintf(os.Stderr, "goroutines left after the control plane stopped: %v\n", err)
		return 1
	}
	return code
}
