package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Env is a running etcd and kube-apiserver pair.
type Env struct {
	// Config reaches the apiserver as a member of system:masters. Its client
	// rate limit is raised (QPS 1000, burst 2000) because the default 5 QPS
	// would make any test creating hundreds of objects crawl. Copy it with
	// rest.CopyConfig before changing it.
	Config *rest.Config
	// APIServerURL is the apiserver's https address on 127.0.0.1.
	APIServerURL string
	// EtcdURL is etcd's https client address on 127.0.0.1. etcd accepts
	// only clients presenting a certificate of the test CA: reach it with
	// EtcdTLSConfig.
	EtcdURL string
	// Dir holds the data, certificates and server logs; Stop removes it.
	Dir string
	// Binaries are the executables that were run.
	Binaries Binaries
	// StartDuration is how long Start took, binary build included.
	StartDuration time.Duration

	cfg  config
	etcd *process
	pki  *pki
	// mu guards apiserver, which RestartAPIServer replaces.
	mu            sync.Mutex
	apiserver     *process
	apiserverPort int
	restarts      int
	ports         []int
	stopOnce      sync.Once
	stopErr       error
}

// Start builds the binaries if needed, starts etcd and kube-apiserver on free
// loopback ports with a fresh temporary directory, and returns once the
// apiserver reports /readyz. The caller must call Stop. ctx bounds start-up
// only; the servers keep running after it ends.
func Start(ctx context.Context, opts ...Option) (*Env, error) {
	begin := time.Now()
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	bins, err := ensureBinaries(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, fmt.Errorf("create temp dir: %w", err)
	}
	e := &Env{Dir: dir, Binaries: bins, cfg: cfg}
	if err := e.start(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	e.StartDuration = time.Since(begin)
	cfg.logf("kubetest: control plane ready at %s in %s", e.APIServerURL, e.StartDuration.Round(time.Millisecond))
	return e, nil
}

// StartT is Start for a single test: it fails t if the control plane cannot
// start, and registers Stop with t.Cleanup, failing t if Stop leaves anything
// behind.
func StartT(t testing.TB, opts ...Option) *Env {
	t.Helper()
	e, err := Start(context.Background(), append([]Option{WithLogf(t.Logf)}, opts...)...)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("kubetest: %v", err)
		}
	})
	return e
}

// attempts covers the small window in which a port reserved by freePorts can be
// taken by someone else before the child binds it.
const attempts = 3

func (e *Env) start(ctx context.Context) error {
	// The certificates come first: etcd serves TLS and authenticates its
	// clients with them.
	p, err := newPKI(e.Dir)
	if err != nil {
		return err
	}
	e.pki = p
	begin := time.Now()
	for i := range attempts {
		if err = e.startEtcd(ctx, i); err == nil {
			break
		}
		if ctx.Err() != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	e.cfg.logf("kubetest: etcd ready at %s in %s", e.EtcdURL, time.Since(begin).Round(time.Millisecond))
	for i := range attempts {
		if err = e.startAPIServer(ctx, i); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
	}
	return err
}

func (e *Env) startEtcd(ctx context.Context, attempt int) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	p := e.pki
	client := "https://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "https://127.0.0.1:" + strconv.Itoa(ports[1])
	args := append([]string{
		"--name=kubetest",
		"--data-dir=" + filepath.Join(e.Dir, fmt.Sprintf("etcd-%d", attempt)),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=kubetest=" + peer,
		// TLS with client certificates on both ports: without them any
		// local user could read and rewrite the cluster's state.
		"--cert-file=" + p.etcdCertFile,
		"--key-file=" + p.etcdKeyFile,
		"--trusted-ca-file=" + p.caFile,
		"--client-cert-auth=true",
		"--peer-cert-file=" + p.etcdCertFile,
		"--peer-key-file=" + p.etcdKeyFile,
		"--peer-trusted-ca-file=" + p.caFile,
		"--peer-client-cert-auth=true",
		// Durability is pointless for a throwaway store and fsync dominates write latency.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}, e.cfg.etcdFlags...)
	proc, err := startProcess("etcd", e.Binaries.Etcd, args, filepath.Join(e.Dir, fmt.Sprintf("etcd-%d.log", attempt)), e.cfg.output)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, e.cfg.startTimeout)
	defer cancel()
	httpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: p.etcdTLSConfig(), DisableKeepAlives: true}}
	err = proc.waitReady(rctx, func(ctx context.Context) error {
		return probe(ctx, httpClient, client+"/health", "")
	})
	if err != nil {
		return errors.Join(err, proc.stop(e.cfg.stopTimeout))
	}
	e.etcd, e.EtcdURL = proc, client
	e.ports = append(e.ports, ports...)
	return nil
}

func (e *Env) startAPIServer(ctx context.Context, attempt int) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	p := e.pki
	e.apiserverPort = ports[0]
	proc, err := e.runAPIServer(ctx, fmt.Sprintf("kube-apiserver-%d.log", attempt))
	if err != nil {
		return err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(ports[0])
	e.apiserver, e.APIServerURL = proc, url
	e.ports = append(e.ports, ports...)
	e.Config = &rest.Config{
		Host:            url,
		BearerToken:     p.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM},
		QPS:             1000,
		Burst:           2000,
	}
	return nil
}

// apiserverArgs is kube-apiserver's command line; it depends only on the
// Env's configuration, so a restart repeats it exactly.
func (e *Env) apiserverArgs() []string {
	p := e.pki
	authorization := []string{
		// The client is in system:masters anyway; skipping RBAC also skips
		// bootstrapping its default roles, which /readyz would wait for.
		"--authorization-mode=AlwaysAllow",
	}
	if e.cfg.rbac {
		authorization = []string{
			"--authorization-mode=RBAC",
			// Setting blockOwnerDeletion then needs "update" on the owner's
			// finalizers subresource, as in a production cluster.
			"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
		}
	}
	args := []string{
		"--etcd-servers=" + e.EtcdURL,
		"--etcd-cafile=" + p.caFile,
		"--etcd-certfile=" + p.etcdClientCertFile,
		"--etcd-keyfile=" + p.etcdClientKeyFile,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(e.apiserverPort),
		"--cert-dir=" + filepath.Join(e.Dir, "certs"),
		"--tls-cert-file=" + p.certFile,
		"--tls-private-key-file=" + p.keyFile,
		"--token-auth-file=" + p.tokenFile,
		// Service-account tokens from the TokenRequest API are signed with
		// this key pair and authenticate as the service account.
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + p.saPubFile,
		"--service-account-signing-key-file=" + p.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		// Pods would otherwise need a service account with a token, which
		// needs the token controller of kube-controller-manager.
		"--disable-admission-plugins=ServiceAccount",
		// Nothing here watches Endpoints for the kubernetes service.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
	args = append(args, authorization...)
	return append(args, e.cfg.apiserverFlags...)
}

const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// runAPIServer starts kube-apiserver on e.apiserverPort and waits for /readyz.
func (e *Env) runAPIServer(ctx context.Context, logName string) (*process, error) {
	p := e.pki
	url := "https://127.0.0.1:" + strconv.Itoa(e.apiserverPort)
	proc, err := startProcess("kube-apiserver", e.Binaries.KubeAPIServer, e.apiserverArgs(), filepath.Join(e.Dir, logName), e.cfg.output)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.caPEM)
	httpClient := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true,
	}}
	rctx, cancel := context.WithTimeout(ctx, e.cfg.startTimeout)
	defer cancel()
	err = proc.waitReady(rctx, func(ctx context.Context) error {
		return probe(ctx, httpClient, url+"/readyz", p.adminToken)
	})
	if err != nil {
		return nil, errors.Join(err, proc.stop(e.cfg.stopTimeout))
	}
	return proc, nil
}

func probe(ctx context.Context, c *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return nil
}

// Stop terminates kube-apiserver, then etcd, waits until both are reaped and
// their ports are closed, and removes Dir. It is safe to call more than once
// and on a nil Env; later calls return the first call's result.
func (e *Env) Stop() error {
	if e == nil {
		return nil
	}
	e.stopOnce.Do(func() {
		var errs []error
		// The apiserver first: stopped the other way round it would spend its
		// shutdown retrying a vanished etcd.
		e.mu.Lock()
		apiserver := e.apiserver
		e.apiserver = nil
		e.mu.Unlock()
		errs = append(errs, apiserver.stop(e.cfg.stopTimeout), e.etcd.stop(e.cfg.stopTimeout))
		for _, port := range e.ports {
			if !portClosed(port) {
				errs = append(errs, fmt.Errorf("port %d still accepts connections after Stop", port))
			}
		}
		if e.Dir != "" {
			if err := os.RemoveAll(e.Dir); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", e.Dir, err))
			}
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// EtcdTLSConfig returns what a client needs to reach etcd at EtcdURL: trust
// in the test CA and the client certificate etcd demands, the one the
// apiserver presents. It returns nil on an Env that never started.
func (e *Env) EtcdTLSConfig() *tls.Config {
	if e == nil || e.pki == nil {
		return nil
	}
	return e.pki.etcdTLSConfig()
}
