//go:build unix

package kubetest

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivateDir accepts dir only if it is a real directory (not a symlink),
// owned by the current user, and neither readable nor writable by anyone
// else.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not by the current user (uid %d)", dir, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %#o; it must not be accessible to other users (want 0700)", dir, perm)
	}
	return nil
}
