//go:build unix && !linux

package kubetest

import "syscall"

// childSysProcAttr puts the child in its own process group so Stop can signal
// everything it started.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
