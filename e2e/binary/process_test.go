package binary

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// controllerProcess is one running replicaset-controller.
type controllerProcess struct {
	name      string
	cmd       *exec.Cmd
	started   time.Time
	healthURL string // http://127.0.0.1:port, or "" when disabled
	// metricsURL is the --metrics-addr server, or "" when the test's
	// args set the flag themselves.
	metricsURL string
	logPath    string

	out  *lockedBuffer
	done chan struct{} // closed once the process has been reaped
	// Set before done is closed.
	exitCode int
	exitedAt time.Time
}

// startController runs the binary with args, its own process group and
// free loopback health and metrics ports, and makes sure t's end leaves no process behind:
// whatever is still running is killed with its group.
func startController(t testing.TB, name string, args ...string) *controllerProcess {
	t.Helper()
	return startControllerEnv(t, name, nil, args...)
}

// startControllerEnv is startController with extra environment variables.
func startControllerEnv(t testing.TB, name string, extraEnv []string, args ...string) *controllerProcess {
	t.Helper()
	p := &controllerProcess{name: name, out: &lockedBuffer{}, done: make(chan struct{})}
	if !hasFlag(args, "--health-addr") {
		port := freePort(t)
		p.healthURL = "http://127.0.0.1:" + strconv.Itoa(port)
		args = append(args, "--health-addr=127.0.0.1:"+strconv.Itoa(port))
	}
	// Two processes at once must not both try the default metrics port.
	if !hasFlag(args, "--metrics-addr") {
		port := freePort(t)
		p.metricsURL = "http://127.0.0.1:" + strconv.Itoa(port)
		args = append(args, "--metrics-addr=127.0.0.1:"+strconv.Itoa(port))
	}
	p.logPath = filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(controllerBinary, args...)
	w := io.MultiWriter(logFile, p.out)
	p.cmd.Stdout, p.cmd.Stderr = w, w
	p.cmd.SysProcAttr = childSysProcAttr()
	// Neither a developer's cluster nor the test's pod may leak in.
	p.cmd.Env = append(cleanEnv(), extraEnv...)
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p.started = time.Now()
	go func() {
		err := p.cmd.Wait()
		p.exitedAt = time.Now()
		p.exitCode = p.cmd.ProcessState.ExitCode()
		if err != nil && p.exitCode == 0 {
			p.exitCode = -1
		}
		logFile.Close()
		close(p.done)
	}()
	t.Logf("%s: started pid %d: %s %s", name, p.cmd.Process.Pid, filepath.Base(controllerBinary), strings.Join(args, " "))
	t.Cleanup(func() {
		if !p.exited() {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s: output (exit code %d):\n%s", name, p.exitCode, tail(p.output(), 400))
		}
	})
	return p
}

// cleanEnv is the test's environment without anything that could point the
// binary at a cluster other than the one its flags name.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "KUBERNETES_") || strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "POD_NAMESPACE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

func (p *controllerProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *controllerProcess) output() string { return p.out.String() }

// signal sends sig to the process (not its group: a shell would signal the
// process, and the binary starts no children).
func (p *controllerProcess) signal(t testing.TB, sig syscall.Signal) time.Time {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: send %v: %v", p.name, sig, err)
	}
	return time.Now()
}

// kill9 kills the process's whole group with SIGKILL and waits for it.
func (p *controllerProcess) kill9(t testing.TB) time.Time {
	t.Helper()
	at := time.Now()
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("%s: kill -9: %v", p.name, err)
	}
	<-p.done
	return at
}

// wait waits up to d for the process to exit and returns its exit code.
func (p *controllerProcess) wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.exitCode
	case <-time.After(d):
		// A Go program prints every goroutine's stack on SIGQUIT: the
		// output then shows where it hangs.
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("%s: still running %s later (started %s ago); sent SIGQUIT for a goroutine dump", p.name, d, time.Since(p.started).Round(time.Millisecond))
		return 0
	}
}

// waitOutput waits until the output contains s.
func (p *controllerProcess) waitOutput(ctx context.Context, t testing.TB, s string) time.Time {
	t.Helper()
	for {
		if strings.Contains(p.output(), s) {
			return time.Now()
		}
		if p.exited() {
			t.Fatalf("%s: exited with code %d before printing %q", p.name, p.exitCode, s)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %q not printed: %v", p.name, s, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitReady polls /readyz until it answers 200 and returns when it did.
func (p *controllerProcess) waitReady(ctx context.Context, t testing.TB) time.Time {
	t.Helper()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var last string
	for {
		status, err := getStatus(ctx, client, p.healthURL+"/readyz")
		if err == nil && status == http.StatusOK {
			return time.Now()
		}
		last = fmt.Sprint(status, err)
		if p.exited() {
			t.Fatalf("%s: exited with code %d before /readyz turned 200 (last: %s)", p.name, p.exitCode, last)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: /readyz not 200 (last: %s): %v", p.name, last, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func getStatus(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// portsHandedOut holds every port freePort has returned in this test binary.
// The kernel may hand the same free port to two listeners in a row when the
// first process has not bound it yet, so two controllers started together
// could otherwise be given one port and one of them would fail to start.
var portsHandedOut struct {
	sync.Mutex
	ports map[int]bool
}

// freePort returns a loopback port nobody listens on right now and that no
// earlier call in this test binary returned.
func freePort(t testing.TB) int {
	t.Helper()
	portsHandedOut.Lock()
	defer portsHandedOut.Unlock()
	if portsHandedOut.ports == nil {
		portsHandedOut.ports = map[int]bool{}
	}
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if !portsHandedOut.ports[port] {
			portsHandedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("freePort: the kernel kept returning ports already handed out")
	return 0
}

// lockedBuffer is a bytes.Buffer safe for a writer and readers at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = append([]string{fmt.Sprintf("... %d lines before", len(all)-lines)}, all[len(all)-lines:]...)
	}
	return strings.Join(all, "\n")
}

func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 300 {
		port := freePort(t)
		if seen[port] {
			t.Fatalf("freePort returned %d twice", port)
		}
		seen[port] = true
	}
}
