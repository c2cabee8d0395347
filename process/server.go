package process

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// shutdownTimeout bounds how long Stop waits for requests in flight.
const shutdownTimeout = 5 * time.Second

// Server is an HTTP server Serve started.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	stop func() bool
}

// Serve listens on addr at once, so a taken port is reported before
// anything else starts, and serves h until ctx is done or Stop is called.
func Serve(ctx context.Context, addr string, h http.Handler) (*Server, error) {
	if ctx == nil || h == nil {
		panic("process: Serve: nil context or handler")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, done: make(chan struct{}), srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}}
	go func() {
		defer close(s.done)
		// Serve fails only once Shutdown closed the listener.
		_ = s.srv.Serve(ln)
	}()
	s.stop = context.AfterFunc(ctx, s.shutdown)
	return s, nil
}

// Addr is the address bound, useful with port 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stop shuts the server down and waits for it to stop.
func (s *Server) Stop() {
	if s.stop() {
		s.shutdown()
	}
	<-s.done
}

func (s *Server) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}

// HealthHandler serves /healthz and /readyz, nothing else. /healthz fails
// when watchdog (nil: none) reports a leader that stopped renewing; /readyz
// fails while ready, called on every request, returns an error. A standby
// should count as ready, so that a rolling update of a one-replica
// Deployment can proceed.
func HealthHandler(watchdog *leaderelection.HealthzAdaptor, ready func() error) http.Handler {
	mux := http.NewServeMux()
	check := func(status int, f func(*http.Request) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := f(r); err != nil {
				http.Error(w, err.Error(), status)
				return
			}
			fmt.Fprintln(w, "ok")
		}
	}
	mux.Handle("/healthz", check(http.StatusInternalServerError, func(r *http.Request) error {
		if watchdog == nil {
			return nil
		}
		return watchdog.Check(r)
	}))
	mux.Handle("/readyz", check(http.StatusServiceUnavailable, func(*http.Request) error { return ready() }))
	return mux
}

// MetricsHandler serves metrics under /metrics and, with profiling, Go's
// profiles under /debug/pprof/. Serve it on a port of its own, loopback by
// default: unlike the probes' port, it need not be open to whoever reaches
// the pod.
func MetricsHandler(metrics http.Handler, profiling bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	if profiling {
		// The index serves every named profile (heap, goroutine, ...);
		// the other four are not profiles and need handlers of their own.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// CheckAddr reports whether addr is an address Serve could listen on: a
// host:port with a port from 0 to 65535 in digits. Whether the port is
// free is CanListen's to say.
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("address %s: the port must be a number from 0 to 65535, not %q", addr, port)
	}
	return nil
}

// CanListen reports whether Serve can listen on addr now, by binding it and
// letting it go. A binary checks its addresses so at start, failing rather
// than running on without a server it was asked for.
func CanListen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return ln.Close()
}
