//go:build linux

package binary

import "syscall"

// childSysProcAttr puts the controller in its own process group, so a test
// can kill everything it started, and has the kernel kill it if the test
// binary dies first (a panic or a `go test -timeout` abort).
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
