package kubetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

const (
	// APIServerPackage is the command built as kube-apiserver.
	APIServerPackage = "k8s.io/kubernetes/cmd/kube-apiserver"
	// EtcdPackage is the command built as etcd.
	EtcdPackage = "go.etcd.io/etcd/server/v3"
)

// Binaries names the two executables a control plane needs.
type Binaries struct {
	KubeAPIServer string
	Etcd          string
}

// EnsureBinaries returns the kube-apiserver and etcd executables that Start
// would use, building them into the cache directory first if they are not
// there yet. CI can call it (through any test) ahead of time to separate the
// one-off build cost from the tests' timings.
//
// Lookup order for each binary: the With...Binary option, then
// KUBETEST_KUBE_APISERVER / KUBETEST_ETCD, then envtest's
// TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD, then the cache, then a build.
func EnsureBinaries(ctx context.Context, opts ...Option) (Binaries, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return ensureBinaries(ctx, &cfg)
}

func ensureBinaries(ctx context.Context, cfg *config) (Binaries, error) {
	b := Binaries{
		KubeAPIServer: firstNonEmpty(cfg.apiserverBinary, os.Getenv("KUBETEST_KUBE_APISERVER"), os.Getenv("TEST_ASSET_KUBE_APISERVER")),
		Etcd:          firstNonEmpty(cfg.etcdBinary, os.Getenv("KUBETEST_ETCD"), os.Getenv("TEST_ASSET_ETCD")),
	}
	for _, p := range []string{b.KubeAPIServer, b.Etcd} {
		if p == "" {
			continue
		}
		if err := checkExecutable(p); err != nil {
			return Binaries{}, err
		}
	}
	if b.KubeAPIServer != "" && b.Etcd != "" {
		return b, nil
	}

	dir, version, err := cachedBuildDir(ctx, cfg)
	if err != nil {
		return Binaries{}, err
	}
	apiserver, etcd := filepath.Join(dir, "kube-apiserver"), filepath.Join(dir, "etcd")
	if checkExecutable(apiserver) != nil || checkExecutable(etcd) != nil {
		if err := build(ctx, cfg, dir, version); err != nil {
			return Binaries{}, err
		}
	}
	if b.KubeAPIServer == "" {
		b.KubeAPIServer = apiserver
	}
	if b.Etcd == "" {
		b.Etcd = etcd
	}
	return b, nil
}

// cachedBuildDir derives the cache directory for the binaries this module
// would build. The directory is keyed by exactly what gets linked: the
// versions (and replacements) of the modules that provide the two commands'
// packages, the Go version and the target platform. Listing those packages
// takes seconds, so the answer is remembered under a cheap key, the hash of the
// whole build list: an unrelated go.mod change then costs one listing, not a
// rebuild, and an unchanged module costs neither.
func cachedBuildDir(ctx context.Context, cfg *config) (dir, k8sVersion string, err error) {
	root, err := cacheRoot(cfg)
	if err != nil {
		return "", "", err
	}
	const moduleFormat = "{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}"
	mods, err := goCmd(ctx, cfg.moduleDir, "list", "-m", "-f", moduleFormat, "all")
	if err != nil {
		return "", "", fmt.Errorf("list the module's build list (is %s a tool of this module?): %w", APIServerPackage, err)
	}
	env, err := goCmd(ctx, cfg.moduleDir, "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED")
	if err != nil {
		return "", "", err
	}
	k8sVersion = moduleVersion(mods, "k8s.io/kubernetes")
	if k8sVersion == "" {
		return "", "", fmt.Errorf("k8s.io/kubernetes is not in the build list of the module in %q; add `tool %s` to its go.mod", cfg.moduleDir, APIServerPackage)
	}
	if err := os.MkdirAll(filepath.Join(root, "refs"), 0o755); err != nil {
		return "", "", fmt.Errorf("create cache directory: %w", err)
	}
	ref := filepath.Join(root, "refs", shortHash(mods+"\n"+env))
	if name, err := os.ReadFile(ref); err == nil && len(name) > 0 {
		return filepath.Join(root, string(name)), k8sVersion, nil
	}
	deps, err := goCmd(ctx, cfg.moduleDir, "list", "-deps", "-f", "{{with .Module}}"+moduleFormat+"{{end}}", APIServerPackage, EtcdPackage)
	if err != nil {
		return "", "", fmt.Errorf("list the dependencies of the control-plane commands: %w", err)
	}
	unique := map[string]bool{}
	for _, line := range strings.Split(deps, "\n") {
		unique[line] = true
	}
	lines := make([]string, 0, len(unique))
	for line := range unique {
		lines = append(lines, line)
	}
	slices.Sort(lines)
	name := k8sVersion + "-" + shortHash(strings.Join(lines, "\n")+"\n"+env)
	// Written through a rename so a concurrent reader never sees half a name.
	tmp := fmt.Sprintf("%s.%d", ref, os.Getpid())
	if err := os.WriteFile(tmp, []byte(name), 0o644); err == nil {
		_ = os.Rename(tmp, ref)
	}
	return filepath.Join(root, name), k8sVersion, nil
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func build(ctx context.Context, cfg *config, dir, k8sVersion string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create cache directory: %w", err)
	}
	// Concurrent test binaries (go test runs packages in parallel) would
	// otherwise all pay for the same multi-minute build.
	unlock, err := lockFile(ctx, dir+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if checkExecutable(filepath.Join(dir, "kube-apiserver")) == nil && checkExecutable(filepath.Join(dir, "etcd")) == nil {
		return nil // another process finished the build while we waited
	}

	// The scratch directory is per key and taken under the lock, so what a
	// killed build left behind is cleared here rather than piling up.
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clear build directory: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("create build directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	ctx, cancel := context.WithTimeout(ctx, cfg.buildTimeout)
	defer cancel()
	ldflags := "-s -w" + versionLDFlags(k8sVersion)
	start := time.Now()
	cfg.logf("kubetest: building %s and %s into %s (a cold build takes several minutes)", APIServerPackage, EtcdPackage, dir)
	// One invocation for both so the go command schedules their packages together.
	if _, err := goCmd(ctx, cfg.moduleDir, "build", "-ldflags", ldflags, "-o", tmp+string(filepath.Separator), APIServerPackage, EtcdPackage); err != nil {
		return fmt.Errorf("build control-plane binaries: %w", err)
	}
	// -o dir names a command after its import path's last element, minus a
	// major-version suffix, so etcd's server/v3 comes out as "server".
	if err := os.Rename(filepath.Join(tmp, "server"), filepath.Join(tmp, "etcd")); err != nil {
		return fmt.Errorf("name etcd binary: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear stale cache entry: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("publish built binaries: %w", err)
	}
	cfg.logf("kubetest: built control-plane binaries in %s", time.Since(start).Round(time.Second))
	return nil
}

// versionLDFlags stamps the apiserver's reported version, which would
// otherwise be v0.0.0-master.
func versionLDFlags(v string) string {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return ""
	}
	const pkg = "k8s.io/component-base/version"
	return fmt.Sprintf(" -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s", pkg, v, pkg, parts[0], pkg, parts[1])
}

func moduleVersion(list, path string) string {
	for _, line := range strings.Split(list, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == path {
			return fields[1]
		}
	}
	return ""
}

func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	goBin := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); checkExecutable(p) == nil {
			goBin = p
		}
	}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	// A build must not outlive the test that asked for it (a `go test -timeout`
	// panic included), so it gets its own process group, the parent-death
	// signal, and cancellation kills the whole group, compilers too.
	cmd.SysProcAttr = childSysProcAttr()
	cmd.Cancel = func() error { return signalGroup(cmd.Process, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("binary %s: %w", path, err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("binary %s: %w", path, errors.New("not an executable file"))
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
