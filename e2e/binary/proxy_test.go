package binary

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/ctrlkit/ctrlkit/e2e/kubetest"
)

// writeKind sorts the writes a controller process makes.
type writeKind int

const (
	// controllerWrite changes pods or an owner's status: the writes that
	// two leaders must never make at once.
	controllerWrite writeKind = iota
	// leaseWrite is leader election's own traffic.
	leaseWrite
	// eventWrite records an Event; harmless to duplicate.
	eventWrite
	// reviewWrite asks the authorizer or authenticator a question (the
	// binary's preflight SelfSubjectAccessReviews); it changes nothing.
	reviewWrite
)

func (k writeKind) String() string {
	return [...]string{"controller", "lease", "event", "review"}[k]
}

// write is one mutating request as the proxy saw it arrive.
type write struct {
	at      time.Time
	done    time.Time // when the apiserver's answer was passed back
	method  string
	path    string
	kind    writeKind
	status  int
	blocked bool
	// owner is the owner a pod creation names as controller, or the owner
	// whose status is written; pod is the pod a deletion or patch names.
	owner, pod string
}

// apiProxy is a loopback TLS reverse proxy in front of the apiserver for one
// controller process. It records every write with the time it arrived, and
// can fail Lease updates on command, which to the process behind it looks
// like an apiserver that keeps refusing its renewals.
type apiProxy struct {
	name     string
	srv      *httptest.Server
	caPEM    []byte
	blocking atomic.Bool

	mu        sync.Mutex
	writes    []write
	blockedAt time.Time
}

func startProxy(t testing.TB, name string) *apiProxy {
	t.Helper()
	return startProxyTo(t, name, env)
}

// startProxyTo is startProxy in front of another control plane.
func startProxyTo(t testing.TB, name string, e *kubetest.Env) *apiProxy {
	t.Helper()
	target, err := url.Parse(e.APIServerURL)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(e.Config.CAData) {
		t.Fatal("kubetest CA is not PEM")
	}
	upstream := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 100,
	}
	p := &apiProxy{name: name}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport: upstream,
		// Watches stream: pass every event on as it comes.
		FlushInterval: -1,
		// A killed controller cuts its requests short; that is expected.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.srv = httptest.NewUnstartedServer(p.handler(rp))
	p.srv.StartTLS() // binds 127.0.0.1
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
		upstream.CloseIdleConnections()
		if t.Failed() {
			t.Logf("%s: writes through the proxy:\n%s", name, tail(p.log(), 60))
		}
	})
	return p
}

func (p *apiProxy) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		rec := write{at: time.Now(), method: r.Method, path: r.URL.Path, kind: classify(r.URL.Path)}
		rec.owner, rec.pod = writeTarget(r)
		if rec.kind == leaseWrite && r.Method == http.MethodPut && p.blocking.Load() {
			rec.blocked, rec.status = true, http.StatusInternalServerError
			p.record(rec)
			writeStatus(w, http.StatusInternalServerError, "the test's proxy refuses Lease updates")
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		rec.done = time.Now()
		rec.status = sw.status
		p.record(rec)
	})
}

// writeTarget names what a controller write is about: the owner a pod
// creation names as controller (read from the body, which is put back), the
// owner of a status write, or the pod a deletion or patch addresses.
func writeTarget(r *http.Request) (owner, pod string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	n := len(parts)
	switch {
	case r.Method == http.MethodPost && n >= 1 && parts[n-1] == "pods" && r.Body != nil:
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return "", ""
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return "", ""
		}
		if p, ok := obj.(*corev1.Pod); ok {
			if ref := metav1.GetControllerOf(p); ref != nil {
				return ref.Name, ""
			}
		}
	case n >= 2 && parts[n-2] == "pods":
		return "", parts[n-1]
	case n >= 3 && parts[n-1] == "status" && (parts[n-3] == "replicasets" || parts[n-3] == "replicationcontrollers"):
		return parts[n-2], ""
	}
	return "", ""
}

func classify(path string) writeKind {
	switch {
	case strings.Contains(path, "/apis/coordination.k8s.io/") && strings.Contains(path, "/leases"):
		return leaseWrite
	case strings.HasSuffix(path, "/events") || strings.Contains(path, "/events/"):
		return eventWrite
	case strings.Contains(path, "/apis/authorization.k8s.io/") || strings.Contains(path, "/apis/authentication.k8s.io/"):
		return reviewWrite
	default:
		return controllerWrite
	}
}

func writeStatus(w http.ResponseWriter, code int, msg string) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: metav1.StatusReasonInternalError, Code: int32(code),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(&st)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (p *apiProxy) record(w write) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes = append(p.writes, w)
}

// blockLeaseUpdates makes every later Lease PUT fail and returns when the
// blocking began.
func (p *apiProxy) blockLeaseUpdates() time.Time {
	p.mu.Lock()
	p.blockedAt = time.Now()
	p.mu.Unlock()
	p.blocking.Store(true)
	return p.blockedAt
}

// writesOf returns the recorded writes of one kind that the apiserver
// accepted or at least received (blocked ones excluded).
func (p *apiProxy) writesOf(kind writeKind) []write {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []write
	for _, w := range p.writes {
		if w.kind == kind && !w.blocked {
			out = append(out, w)
		}
	}
	return out
}

// countSince counts the writes of kind that arrived at or after since.
func (p *apiProxy) countSince(kind writeKind, since time.Time) (n int, last time.Time) {
	for _, w := range p.writesOf(kind) {
		if !w.at.Before(since) {
			n++
		}
		if w.at.After(last) {
			last = w.at
		}
	}
	return n, last
}

// log is every write, one timestamped line each.
func (p *apiProxy) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, w := range p.writes {
		fmt.Fprintf(&b, "%s %-10s %-6s %d blocked=%t %s\n", w.at.Format("15:04:05.000000"), w.kind, w.method, w.status, w.blocked, w.path)
	}
	return b.String()
}

// kubeconfig writes a kubeconfig for id that reaches the apiserver through
// this proxy.
func (p *apiProxy) kubeconfig(t testing.TB, id *identity) string {
	t.Helper()
	path, err := id.writeKubeconfig(filepath.Join(t.TempDir(), p.name+".kubeconfig"), p.srv.URL, p.caPEM)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
