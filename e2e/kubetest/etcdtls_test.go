package kubetest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestEtcdRequiresClientCertificate checks that etcd is not open to any local
// user: a client without the test CA's client certificate can neither read
// etcd's keys over plain HTTP nor over TLS, while the same request with
// EtcdTLSConfig's certificate (the one kube-apiserver presents) succeeds.
func TestEtcdRequiresClientCertificate(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	env, err := Start(ctx, WithLogf(t.Logf))
	require.NoError(t, err)
	defer func() { require.NoError(t, env.Stop()) }()

	u, err := url.Parse(env.EtcdURL)
	require.NoError(t, err)
	assert.Equal(t, "https", u.Scheme, "etcd client URL")
	hostPort := u.Host

	// rangeAll asks etcd's JSON gateway for every key, which only an
	// authenticated client may do.
	rangeAll := func(t *testing.T, base string, tlsConfig *tls.Config) error {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v3/kv/range",
			bytes.NewReader([]byte(`{"key":"AA==","range_end":"AA=="}`)))
		require.NoError(t, err)
		tr := &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return &statusError{resp.Status}
		}
		return nil
	}

	trustOnly := env.EtcdTLSConfig().Clone()
	trustOnly.Certificates = nil

	otherCA := otherCAClientCertificate(t)

	t.Run("plain http is refused", func(t *testing.T) {
		assert.Error(t, rangeAll(t, "http://"+hostPort, nil))
	})
	t.Run("tls without client certificate is refused", func(t *testing.T) {
		err := rangeAll(t, "https://"+hostPort, trustOnly)
		require.Error(t, err)
		// Refused for the missing certificate, not because the client
		// distrusted etcd's serving certificate.
		var unknownAuthority x509.UnknownAuthorityError
		assert.NotErrorAs(t, err, &unknownAuthority)
		assert.True(t, strings.Contains(err.Error(), "certificate"), "unexpected error: %v", err)
	})
	t.Run("tls with a certificate of another CA is refused", func(t *testing.T) {
		tlsConfig := trustOnly.Clone()
		tlsConfig.Certificates = []tls.Certificate{otherCA}
		assert.Error(t, rangeAll(t, "https://"+hostPort, tlsConfig))
	})
	t.Run("tls with the client certificate is accepted", func(t *testing.T) {
		assert.NoError(t, rangeAll(t, env.EtcdURL, env.EtcdTLSConfig()))
		_, err := env.CompactEtcd(ctx)
		assert.NoError(t, err, "CompactEtcd presents the client certificate")
	})
}

type statusError struct{ status string }

func (e *statusError) Error() string { return "etcd answered " + e.status }

// otherCAClientCertificate issues a client certificate from a CA etcd does not
// trust, as a local user could make for themselves.
func otherCAClientCertificate(t *testing.T) tls.Certificate {
	t.Helper()
	now := time.Now()
	ca, err := newCertAuthority(now)
	require.NoError(t, err)
	certPEM, keyPEM, err := ca.issue(now, leafCert{commonName: "intruder", usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	return cert
}
