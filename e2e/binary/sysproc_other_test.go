//go:build unix && !linux

package binary

import "syscall"

// childSysProcAttr puts the controller in its own process group, so a test
// can kill everything it started.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
