package kubetest

import (
	"io"
	"time"
)

// Option configures Start.
type Option func(*config)

type config struct {
	apiserverBinary string
	etcdBinary      string
	cacheDir        string
	moduleDir       string
	apiserverFlags  []string
	etcdFlags       []string
	output          io.Writer
	startTimeout    time.Duration
	stopTimeout     time.Duration
	buildTimeout    time.Duration
	logf            func(format string, args ...any)
	rbac            bool
}

func defaultConfig() config {
	return config{
		startTimeout: 60 * time.Second,
		stopTimeout:  20 * time.Second,
		// A cold build of kube-apiserver takes about 5 minutes on two cores; this
		// leaves room for a slow, shared machine without hanging forever.
		buildTimeout: 30 * time.Minute,
		logf:         func(string, ...any) {},
	}
}

// WithKubeAPIServerBinary uses an existing kube-apiserver binary instead of
// building one. It takes precedence over KUBETEST_KUBE_APISERVER.
func WithKubeAPIServerBinary(path string) Option {
	return func(c *config) { c.apiserverBinary = path }
}

// WithEtcdBinary uses an existing etcd binary instead of building one. It takes
// precedence over KUBETEST_ETCD.
func WithEtcdBinary(path string) Option {
	return func(c *config) { c.etcdBinary = path }
}

// WithCacheDir sets where built binaries are kept between runs. The default is
// $KUBETEST_CACHE_DIR, else os.UserCacheDir()/ctrlkit-kubetest.
func WithCacheDir(dir string) Option {
	return func(c *config) { c.cacheDir = dir }
}

// WithModuleDir sets the directory `go build` runs in; its go.mod decides which
// versions are built. The default is the working directory, which for `go test`
// is the package under test.
func WithModuleDir(dir string) Option {
	return func(c *config) { c.moduleDir = dir }
}

// WithAPIServerFlags appends flags to kube-apiserver's command line. A flag
// given here overrides the same flag set by kubetest, because the last
// occurrence wins.
func WithAPIServerFlags(flags ...string) Option {
	return func(c *config) { c.apiserverFlags = append(c.apiserverFlags, flags...) }
}

// WithEtcdFlags appends flags to etcd's command line.
func WithEtcdFlags(flags ...string) Option {
	return func(c *config) { c.etcdFlags = append(c.etcdFlags, flags...) }
}

// WithOutput copies both servers' stdout and stderr to w. By default their
// output goes to log files in Env.Dir, which Stop removes.
func WithOutput(w io.Writer) Option {
	return func(c *config) { c.output = w }
}

// WithStartTimeout bounds how long Start waits for each server to become ready
// (building binaries is bounded separately). Non-positive values keep the
// default of 60 s.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.startTimeout = d
		}
	}
}

// WithStopTimeout bounds how long Stop waits for a server to exit after
// SIGTERM before it sends SIGKILL. Non-positive values keep the default of 20 s.
func WithStopTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.stopTimeout = d
		}
	}
}

// WithBuildTimeout bounds a cold `go build` of the servers. Non-positive values
// keep the default of 30 minutes.
func WithBuildTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.buildTimeout = d
		}
	}
}

// WithLogf receives progress messages (builds, ports, timings); pass t.Logf or
// log.Printf. A nil function is ignored.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *config) {
		if logf != nil {
			c.logf = logf
		}
	}
}

// WithRBAC runs the apiserver with RBAC authorization and the
// OwnerReferencesPermissionEnforcement admission plugin, as a production
// cluster does, instead of allowing every request. Env.Config still
// authenticates as a member of system:masters, which RBAC lets do anything,
// so a test's own setup is unaffected; the code under test runs with a
// restricted identity from ImpersonationConfig or ServiceAccountConfig and
// is then refused anything its roles do not grant. Start takes a little
// longer, because /readyz waits for the default roles to be bootstrapped.
func WithRBAC() Option {
	return func(c *config) { c.rbac = true }
}
