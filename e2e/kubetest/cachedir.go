package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
)

// cacheRoot is where built binaries are kept: the WithCacheDir option, then
// $KUBETEST_CACHE_DIR, then ctrlkit-kubetest under the user's cache directory.
// Without a user cache directory (no $HOME, as in a bare CI container) it is a
// per-user directory under the temp dir, which must be private: a directory
// anyone could have created in a shared /tmp could hold binaries planted by
// another user, and the tests would execute them.
func cacheRoot(cfg *config) (string, error) {
	if dir := firstNonEmpty(cfg.cacheDir, os.Getenv("KUBETEST_CACHE_DIR")); dir != "" {
		return dir, nil
	}
	if userCache, err := os.UserCacheDir(); err == nil {
		return filepath.Join(userCache, "ctrlkit-kubetest"), nil
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("ctrlkit-kubetest-%d", os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("create cache directory: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", fmt.Errorf("cache directory (set KUBETEST_CACHE_DIR to use another): %w", err)
	}
	return dir, nil
}
