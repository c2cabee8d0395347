package kubetest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptions(t *testing.T) {
	var logged []string
	tests := []struct {
		name  string
		opts  []Option
		check func(t *testing.T, c config)
	}{
		{"defaults", nil, func(t *testing.T, c config) {
			assert.Equal(t, 60*time.Second, c.startTimeout)
			assert.Equal(t, 20*time.Second, c.stopTimeout)
			assert.Equal(t, 30*time.Minute, c.buildTimeout)
			assert.NotNil(t, c.logf)
		}},
		{"non-positive durations keep defaults", []Option{WithStartTimeout(0), WithStopTimeout(-time.Second), WithBuildTimeout(0)}, func(t *testing.T, c config) {
			assert.Equal(t, 60*time.Second, c.startTimeout)
			assert.Equal(t, 20*time.Second, c.stopTimeout)
			assert.Equal(t, 30*time.Minute, c.buildTimeout)
		}},
		{"durations", []Option{WithStartTimeout(time.Second), WithStopTimeout(2 * time.Second), WithBuildTimeout(3 * time.Second)}, func(t *testing.T, c config) {
			assert.Equal(t, time.Second, c.startTimeout)
			assert.Equal(t, 2*time.Second, c.stopTimeout)
			assert.Equal(t, 3*time.Second, c.buildTimeout)
		}},
		{"flags accumulate in order", []Option{WithAPIServerFlags("--a=1"), WithAPIServerFlags("--b=2"), WithEtcdFlags("--c")}, func(t *testing.T, c config) {
			assert.Equal(t, []string{"--a=1", "--b=2"}, c.apiserverFlags)
			assert.Equal(t, []string{"--c"}, c.etcdFlags)
		}},
		{"nil logf is ignored", []Option{WithLogf(nil)}, func(t *testing.T, c config) {
			assert.NotPanics(t, func() { c.logf("x") })
		}},
		{"logf", []Option{WithLogf(func(f string, _ ...any) { logged = append(logged, f) })}, func(t *testing.T, c config) {
			c.logf("hello")
			assert.Equal(t, []string{"hello"}, logged)
		}},
		{"paths", []Option{WithCacheDir("/c"), WithModuleDir("/m"), WithKubeAPIServerBinary("/a"), WithEtcdBinary("/e")}, func(t *testing.T, c config) {
			assert.Equal(t, "/c", c.cacheDir)
			assert.Equal(t, "/m", c.moduleDir)
			assert.Equal(t, "/a", c.apiserverBinary)
			assert.Equal(t, "/e", c.etcdBinary)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultConfig()
			for _, o := range tt.opts {
				o(&c)
			}
			tt.check(t, c)
		})
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(notExec, []byte("x"), 0o644))

	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"missing apiserver binary", []Option{WithKubeAPIServerBinary(filepath.Join(dir, "nope")), WithEtcdBinary(notExec)}, "no such file"},
		{"binary not executable", []Option{WithKubeAPIServerBinary(notExec), WithEtcdBinary(notExec)}, "not an executable"},
		{"directory as binary", []Option{WithKubeAPIServerBinary(dir), WithEtcdBinary(dir)}, "not an executable"},
		{"module without k8s.io/kubernetes", []Option{WithModuleDir(dir), WithCacheDir(dir)}, "go list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBETEST_KUBE_APISERVER", "")
			t.Setenv("KUBETEST_ETCD", "")
			t.Setenv("TEST_ASSET_KUBE_APISERVER", "")
			t.Setenv("TEST_ASSET_ETCD", "")
			_, err := EnsureBinaries(context.Background(), tt.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			env, err := Start(context.Background(), tt.opts...)
			assert.Nil(t, env)
			assert.Error(t, err)
		})
	}
}

func TestNilEnv(t *testing.T) {
	var e *Env
	assert.NoError(t, e.Stop())
	cfg, closeIdle, err := e.ClientConfig(nil)
	assert.Nil(t, cfg)
	assert.Error(t, err)
	assert.NotPanics(t, closeIdle)
}

func TestVersionLDFlags(t *testing.T) {
	tests := []struct{ in, want string }{
		{"v1.36.3", " -X k8s.io/component-base/version.gitVersion=v1.36.3 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"},
		{"garbage", ""},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, versionLDFlags(tt.in), tt.in)
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := freePorts(3)
	require.NoError(t, err)
	require.Len(t, ports, 3)
	seen := map[int]bool{}
	for _, p := range ports {
		assert.False(t, seen[p], "duplicate port %d", p)
		seen[p] = true
		assert.True(t, portClosed(p), "reserved port %d must be released", p)
	}
}

func TestEnsureBinariesLookupOrder(t *testing.T) {
	dir := t.TempDir()
	exe := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
		return p
	}
	optAPI, envAPI, assetAPI := exe("opt-apiserver"), exe("env-apiserver"), exe("asset-apiserver")
	optEtcd, envEtcd, assetEtcd := exe("opt-etcd"), exe("env-etcd"), exe("asset-etcd")
	tests := []struct {
		name     string
		env      map[string]string
		opts     []Option
		wantAPI  string
		wantEtcd string
	}{
		{"options win", map[string]string{"KUBETEST_KUBE_APISERVER": envAPI, "KUBETEST_ETCD": envEtcd},
			[]Option{WithKubeAPIServerBinary(optAPI), WithEtcdBinary(optEtcd)}, optAPI, optEtcd},
		{"kubetest variables before envtest's", map[string]string{"KUBETEST_KUBE_APISERVER": envAPI, "KUBETEST_ETCD": envEtcd,
			"TEST_ASSET_KUBE_APISERVER": assetAPI, "TEST_ASSET_ETCD": assetEtcd}, nil, envAPI, envEtcd},
		{"envtest variables", map[string]string{"TEST_ASSET_KUBE_APISERVER": assetAPI, "TEST_ASSET_ETCD": assetEtcd}, nil, assetAPI, assetEtcd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"KUBETEST_KUBE_APISERVER", "KUBETEST_ETCD", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD"} {
				t.Setenv(k, tt.env[k])
			}
			// A cache directory that does not exist proves nothing is built.
			b, err := EnsureBinaries(context.Background(), append(tt.opts, WithCacheDir(filepath.Join(dir, "absent")))...)
			require.NoError(t, err)
			assert.Equal(t, Binaries{KubeAPIServer: tt.wantAPI, Etcd: tt.wantEtcd}, b)
			assert.NoDirExists(t, filepath.Join(dir, "absent"))
		})
	}
}

// TestCachedBuildDir checks the cache key of this module: stable across
// calls, remembered under the cheap build-list key, and named after the
// Kubernetes version.
func TestCachedBuildDir(t *testing.T) {
	cfg := defaultConfig()
	cfg.cacheDir = t.TempDir()
	first, version, err := cachedBuildDir(context.Background(), &cfg)
	require.NoError(t, err)
	assert.Regexp(t, `^v1\.\d+\.\d+$`, version)
	assert.Regexp(t, `^`+regexp.QuoteMeta(version)+`-[0-9a-f]{16}$`, filepath.Base(first))
	refs, err := os.ReadDir(filepath.Join(cfg.cacheDir, "refs"))
	require.NoError(t, err)
	require.Len(t, refs, 1)
	name, err := os.ReadFile(filepath.Join(cfg.cacheDir, "refs", refs[0].Name()))
	require.NoError(t, err)
	assert.Equal(t, filepath.Base(first), string(name))

	second, _, err := cachedBuildDir(context.Background(), &cfg)
	require.NoError(t, err)
	assert.Equal(t, first, second)
}
