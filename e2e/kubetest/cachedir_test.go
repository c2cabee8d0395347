//go:build unix

package kubetest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutUserCacheDir makes os.UserCacheDir fail, as in a container with no
// $HOME, and points the temp dir at a fresh directory.
func withoutUserCacheDir(t *testing.T) (tmp, want string) {
	t.Setenv("KUBETEST_CACHE_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	tmp = t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := os.UserCacheDir()
	require.Error(t, err, "the environment still has a user cache dir")
	return tmp, filepath.Join(tmp, "ctrlkit-kubetest-"+strconv.Itoa(os.Getuid()))
}

func TestCacheRootWithoutUserCacheDir(t *testing.T) {
	t.Run("created private per user", func(t *testing.T) {
		_, want := withoutUserCacheDir(t)
		cfg := defaultConfig()
		root, err := cacheRoot(&cfg)
		require.NoError(t, err)
		assert.Equal(t, want, root)
		fi, err := os.Lstat(root)
		require.NoError(t, err)
		assert.True(t, fi.IsDir())
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
		again, err := cacheRoot(&cfg)
		require.NoError(t, err, "an existing private directory is reused")
		assert.Equal(t, root, again)
	})
	t.Run("accessible to others is refused", func(t *testing.T) {
		_, want := withoutUserCacheDir(t)
		require.NoError(t, os.Mkdir(want, 0o700))
		require.NoError(t, os.Chmod(want, 0o777))
		cfg := defaultConfig()
		_, err := cacheRoot(&cfg)
		assert.ErrorContains(t, err, "must not be accessible to other users")
	})
	t.Run("symlink is refused", func(t *testing.T) {
		tmp, want := withoutUserCacheDir(t)
		target := filepath.Join(tmp, "elsewhere")
		require.NoError(t, os.Mkdir(target, 0o700))
		require.NoError(t, os.Symlink(target, want))
		cfg := defaultConfig()
		_, err := cacheRoot(&cfg)
		assert.ErrorContains(t, err, "is not a directory")
	})
	t.Run("owned by another user is refused", func(t *testing.T) {
		_, want := withoutUserCacheDir(t)
		require.NoError(t, os.Mkdir(want, 0o700))
		// Only root can give a directory away; as anyone else, a directory
		// owned by another user cannot be made here, and the check is
		// covered by the mode and symlink cases above.
		if os.Getuid() != 0 {
			t.Skip("chown to another user needs root")
		}
		require.NoError(t, os.Chown(want, 65534, 65534))
		cfg := defaultConfig()
		_, err := cacheRoot(&cfg)
		assert.ErrorContains(t, err, "owned by uid 65534")
	})
	t.Run("explicit directory wins", func(t *testing.T) {
		withoutUserCacheDir(t)
		cfg := defaultConfig()
		cfg.cacheDir = "/explicit"
		root, err := cacheRoot(&cfg)
		require.NoError(t, err)
		assert.Equal(t, "/explicit", root)
	})
}
