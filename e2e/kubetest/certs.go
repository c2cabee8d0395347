package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is what the control plane needs to serve TLS, to authenticate to etcd
// and to sign service-account tokens, written as PEM files into dir. One CA
// signs every certificate: the apiserver's serving certificate, etcd's
// serving (and peer) certificate and the etcd client certificate that the
// apiserver and kubetest itself present, since etcd accepts no client without
// one. ECDSA keys are used because they are generated in microseconds, where
// RSA would add noticeable start-up time.
type pki struct {
	caPEM      []byte
	caFile     string
	certFile   string
	keyFile    string
	saKeyFile  string
	saPubFile  string
	tokenFile  string
	adminToken string

	// etcdCertFile and etcdKeyFile are etcd's serving certificate, also
	// used between peers and by etcd's JSON gateway when it dials etcd's
	// own gRPC port, hence valid for both server and client auth.
	etcdCertFile string
	etcdKeyFile  string
	// etcdClientCertFile and etcdClientKeyFile are what kube-apiserver
	// presents to etcd; etcdClient is the same pair for kubetest's own calls.
	etcdClientCertFile string
	etcdClientKeyFile  string
	etcdClient         tls.Certificate
}

// certAuthority is the test cluster's CA, kept in memory only while newPKI
// issues certificates: its key is never written to disk.
type certAuthority struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	serial int64
}

// leafCert describes a certificate to issue.
type leafCert struct {
	commonName string
	usages     []x509.ExtKeyUsage
	// dnsNames are added to the loopback IP addresses every serving
	// certificate here is valid for.
	dnsNames []string
	serving  bool
}

func newCertAuthority(now time.Time) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubetest-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return &certAuthority{cert: cert, key: key, serial: 1}, nil
}

// issue signs a new key pair for leaf and returns the certificate followed by
// the CA's (so clients that only trust the CA can verify the chain) and the
// private key, both PEM-encoded.
func (ca *certAuthority) issue(now time.Time, leaf leafCert) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate %s key: %w", leaf.commonName, err)
	}
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: leaf.commonName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  leaf.usages,
	}
	if leaf.serving {
		tmpl.DNSNames = leaf.dnsNames
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("create %s certificate: %w", leaf.commonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal %s key: %w", leaf.commonName, err)
	}
	certPEM = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.pem()...)
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func (ca *certAuthority) pem() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

func newPKI(dir string) (*pki, error) {
	now := time.Now()
	ca, err := newCertAuthority(now)
	if err != nil {
		return nil, err
	}
	apiserverCert, apiserverKey, err := ca.issue(now, leafCert{
		commonName: "kube-apiserver",
		usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		dnsNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		serving:    true,
	})
	if err != nil {
		return nil, err
	}
	etcdCert, etcdKey, err := ca.issue(now, leafCert{
		commonName: "etcd",
		usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		dnsNames:   []string{"localhost"},
		serving:    true,
	})
	if err != nil {
		return nil, err
	}
	etcdClientCert, etcdClientKey, err := ca.issue(now, leafCert{
		commonName: "kube-apiserver-etcd-client",
		usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	etcdClient, err := tls.X509KeyPair(etcdClientCert, etcdClientKey)
	if err != nil {
		return nil, fmt.Errorf("load etcd client certificate: %w", err)
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	saKeyDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, fmt.Errorf("marshal service-account key: %w", err)
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("marshal service-account public key: %w", err)
	}

	token, err := randomToken()
	if err != nil {
		return nil, err
	}

	p := &pki{
		caPEM:              ca.pem(),
		caFile:             filepath.Join(dir, "ca.crt"),
		certFile:           filepath.Join(dir, "apiserver.crt"),
		keyFile:            filepath.Join(dir, "apiserver.key"),
		saKeyFile:          filepath.Join(dir, "sa.key"),
		saPubFile:          filepath.Join(dir, "sa.pub"),
		tokenFile:          filepath.Join(dir, "tokens.csv"),
		adminToken:         token,
		etcdCertFile:       filepath.Join(dir, "etcd.crt"),
		etcdKeyFile:        filepath.Join(dir, "etcd.key"),
		etcdClientCertFile: filepath.Join(dir, "etcd-client.crt"),
		etcdClientKeyFile:  filepath.Join(dir, "etcd-client.key"),
		etcdClient:         etcdClient,
	}
	files := []struct {
		path string
		data []byte
	}{
		{p.caFile, p.caPEM},
		{p.certFile, apiserverCert},
		{p.keyFile, apiserverKey},
		{p.etcdCertFile, etcdCert},
		{p.etcdKeyFile, etcdKey},
		{p.etcdClientCertFile, etcdClientCert},
		{p.etcdClientKeyFile, etcdClientKey},
		{p.saKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saKeyDER})},
		{p.saPubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER})},
		// token,user,uid,"group1,group2": system:masters bypasses authorization entirely.
		{p.tokenFile, []byte(fmt.Sprintf("%s,kubetest-admin,kubetest-admin,\"system:masters\"\n", token))},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return p, nil
}

// etcdTLSConfig is what a client of etcd needs: trust in the test CA and the
// client certificate etcd demands.
func (p *pki) etcdTLSConfig() *tls.Config {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.caPEM)
	return &tls.Config{
		RootCAs:      roots,
		Certificates: []tls.Certificate{p.etcdClient},
		MinVersion:   tls.VersionTLS12,
	}
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return fmt.Sprintf("%x", b), nil
}
