//go:build unix

package kubetest

import (
	"os"
	"syscall"
)

// signalGroup signals the child's whole process group: the servers start no
// helpers today, but a group kill leaves nothing behind if they ever do.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if p == nil {
		return errNoProcess
	}
	return syscall.Kill(-p.Pid, sig)
}
