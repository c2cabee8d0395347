//go:build linux

package kubetest

import "syscall"

// childSysProcAttr puts the child in its own process group and asks the kernel
// to kill it if the test process dies without calling Stop (a panic or a
// `go test -timeout` abort), so no orphaned server keeps its ports.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
