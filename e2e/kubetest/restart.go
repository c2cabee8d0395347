package kubetest

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// StopAPIServer stops kube-apiserver and leaves etcd running, so that a test
// can hold the control plane down for as long as it likes before
// StartAPIServer. Clients see connection errors meanwhile. It sends SIGTERM
// and, if the apiserver is still winding down its open watches after
// apiserverStopGrace, SIGKILL: either way is a stop a client must survive,
// and every write the apiserver acknowledged is already in etcd. Stopping an
// apiserver that is already stopped does nothing.
func (e *Env) StopAPIServer() error {
	if e == nil {
		return errors.New("kubetest: StopAPIServer on a nil Env")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.apiserver == nil {
		return nil
	}
	err := e.apiserver.stop(apiserverStopGrace)
	e.apiserver = nil
	if err != nil && !errors.Is(err, errKilled) {
		return fmt.Errorf("kubetest: stop kube-apiserver: %w", err)
	}
	return nil
}

// apiserverStopGrace is how long StopAPIServer lets kube-apiserver shut down
// gracefully; with watches open it otherwise takes about 20 s.
const apiserverStopGrace = 3 * time.Second

// StartAPIServer starts kube-apiserver again after StopAPIServer, with the
// same flags, certificates and port and the same etcd, so Config and every
// client built from it keep working, and returns once /readyz passes. Starting
// an apiserver that is running does nothing. It fails if the port was taken
// by someone else in the meantime.
func (e *Env) StartAPIServer(ctx context.Context) error {
	if e == nil {
		return errors.New("kubetest: StartAPIServer on a nil Env")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.apiserver != nil {
		return nil
	}
	if e.pki == nil || e.apiserverPort == 0 {
		return errors.New("kubetest: StartAPIServer on an Env that never started")
	}
	begin := time.Now()
	e.restarts++
	proc, err := e.runAPIServer(ctx, fmt.Sprintf("kube-apiserver-restart-%d.log", e.restarts))
	if err != nil {
		return fmt.Errorf("kubetest: restart kube-apiserver: %w", err)
	}
	e.apiserver = proc
	e.cfg.logf("kubetest: kube-apiserver ready again at %s in %s", e.APIServerURL, time.Since(begin).Round(time.Millisecond))
	return nil
}

// RestartAPIServer stops kube-apiserver and starts it again on the same port
// with the same etcd: StopAPIServer followed by StartAPIServer. Watches are
// cut and requests in flight fail; every object survives in etcd.
func (e *Env) RestartAPIServer(ctx context.Context) error {
	if err := e.StopAPIServer(); err != nil {
		return err
	}
	return e.StartAPIServer(ctx)
}
