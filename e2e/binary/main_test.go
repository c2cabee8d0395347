package binary

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// Shared by every scenario of the package.
var (
	// env is the control plane, running RBAC authorization.
	env *kubetest.Env
	// controllerBinary is the replicaset-controller executable under test.
	controllerBinary string
	// shipped is the ServiceAccount identity of deploy/rbac-*.yaml.
	shipped *identity
)

// The command under test, built in this module (a tool of its go.mod), so
// with the newest Kubernetes libraries the suite runs against, as an
// operator building it in a module of their own would. Built in the
// library's module it links the library's floor (k8s.io/* v0.34), where
// the API server can't be asked to filter by shard and every share is
// filtered on the client (see shard.ServerSelection).
const controllerPackage = "github.com/ctrlkit/ctrlkit/examples/replicaset/cmd/replicaset-controller"

// binaryEnv names an existing replicaset-controller executable to test
// instead of building one (another revision's, say).
const binaryEnv = "CTRLKIT_E2E_CONTROLLER_BINARY"

// repoRoot is the library module's root, relative to this package.
const repoRoot = "../.."

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The budget covers a cold build of kube-apiserver on a slow machine.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	dir, err := os.MkdirTemp("", "ctrlkit-e2e-binary-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	if controllerBinary = os.Getenv(binaryEnv); controllerBinary == "" {
		begin := time.Now()
		controllerBinary = filepath.Join(dir, "replicaset-controller")
		build := exec.CommandContext(ctx, "go", "build", "-o", controllerBinary, controllerPackage)
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", controllerPackage, err, out)
			return 1
		}
		fmt.Printf("binary: built %s in %s\n", controllerPackage, time.Since(begin).Round(time.Millisecond))
	}

	env, err = kubetest.Start(ctx, kubetest.WithLogf(log.Printf), kubetest.WithRBAC())
	if err != nil {
		fmt.Fprintf(os.Stderr, "start control plane: %v\n", err)
		return 1
	}
	fmt.Printf("binary: control plane started in %s\n", env.StartDuration.Round(time.Millisecond))
	code := func() int {
		shipped, err = setUpShippedIdentity(ctx, dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "set up the shipped identity: %v\n", err)
			return 1
		}
		return m.Run()
	}()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		return 1
	}
	return code
}
