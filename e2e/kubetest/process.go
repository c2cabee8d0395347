package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// process is one server child. The single goroutine per child waits for it,
// so exited reports an early crash and Stop knows when the process is reaped.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
	err    error // valid once exited is closed
}

func startProcess(name, binary string, args []string, logPath string, output io.Writer) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create %s log: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	var out io.Writer = logFile
	if output != nil {
		out = io.MultiWriter(logFile, output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childSysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logFile, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop asks the process to exit with SIGTERM, escalates to SIGKILL after
// timeout, and returns once it is reaped (cmd.Wait has also drained any output
// copying goroutines by then).
func (p *process) stop(timeout time.Duration) error {
	if p == nil {
		return nil
	}
	defer p.log.Close()
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = signalGroup(p.cmd.Process, syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
	}
	_ = signalGroup(p.cmd.Process, syscall.SIGKILL)
	select {
	case <-p.exited:
		return fmt.Errorf("%s ignored SIGTERM for %s and %w", p.name, timeout, errKilled)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// errExited explains an early exit, pointing at the log that says why.
func (p *process) errExited() error {
	return fmt.Errorf("%s exited during start-up (%v); see %s", p.name, p.err, p.log.Name())
}

// waitReady polls probe until it succeeds, the process dies, or ctx ends.
func (p *process) waitReady(ctx context.Context, probe func(context.Context) error) error {
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = probe(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return p.errExited()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready (last probe: %v; log %s): %w", p.name, last, p.log.Name(), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePorts reserves n distinct loopback ports by listening on port 0, then
// releases them for the child to bind. Another process could grab one in
// between; Start retries the whole component when a child fails to bind.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserve a loopback port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portClosed reports whether nothing accepts connections on the port any more.
func portClosed(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 200*time.Millisecond)
	if err != nil {
		return true
	}
	_ = conn.Close()
	return false
}

var errNoProcess = errors.New("no process")

// errKilled marks a stop that had to escalate to SIGKILL.
var errKilled = errors.New("was killed")
