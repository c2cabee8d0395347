package kubetest

import (
	"fmt"
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// ClientConfig returns a copy of Config that uses a private HTTP transport,
// optionally wrapped (to count or fail requests), and a function that closes
// that transport's idle connections.
//
// client-go shares one cached transport between every config with the same
// TLS settings, so connections opened by one test would outlive it and show up
// in a goroutine-leak check. A private transport keeps each test's connections
// its own: call the returned function once the test's clients are done.
func (e *Env) ClientConfig(wrap func(http.RoundTripper) http.RoundTripper) (*rest.Config, func(), error) {
	if e == nil || e.Config == nil {
		return nil, func() {}, fmt.Errorf("kubetest: ClientConfig on an Env that is not running")
	}
	cfg := rest.CopyConfig(e.Config)
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, func() {}, fmt.Errorf("kubetest: TLS config: %w", err)
	}
	tr := utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 100,
	})
	// rest.Config refuses a custom transport together with TLS settings: the
	// transport carries them now.
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	var rt http.RoundTripper = tr
	if wrap != nil {
		rt = wrap(rt)
	}
	cfg.Transport = rt
	return cfg, tr.CloseIdleConnections, nil
}
