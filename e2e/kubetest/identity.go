package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ImpersonationConfig returns a copy of cfg (normally an admin config from
// Env.Config or Env.ClientConfig) whose requests act as the service account
// namespace/name, with the groups the apiserver gives a service account's
// own token. The apiserver authorizes them as that account, so with WithRBAC
// a request its roles do not grant is refused, exactly as for a controller
// running in a pod. Unlike a token from ServiceAccountToken it needs no
// ServiceAccount object and never expires.
func ImpersonationConfig(cfg *rest.Config, namespace, name string) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Impersonate = rest.ImpersonationConfig{
		UserName: serviceaccount.MakeUsername(namespace, name),
		Groups:   append(serviceaccount.MakeGroupNames(namespace), "system:authenticated"),
	}
	return out
}

// ServiceAccountToken returns a token for the ServiceAccount namespace/name,
// which must exist, from the TokenRequest API: the way kubelet obtains the
// token it mounts into a pod. expiration is the requested lifetime; the
// apiserver accepts ten minutes or more.
func (e *Env) ServiceAccountToken(ctx context.Context, namespace, name string, expiration time.Duration) (string, error) {
	if e == nil || e.Config == nil {
		return "", errors.New("kubetest: ServiceAccountToken on an Env that is not running")
	}
	cfg, closeIdle, err := e.ClientConfig(nil)
	if err != nil {
		return "", err
	}
	defer closeIdle()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("kubetest: %w", err)
	}
	seconds := int64(expiration / time.Second)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	resp, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("kubetest: token for service account %s/%s: %w", namespace, name, err)
	}
	return resp.Status.Token, nil
}

// TokenConfig returns a config that reaches the apiserver with only the given
// bearer token (for example from ServiceAccountToken), with the same raised
// rate limit as Config.
func (e *Env) TokenConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            e.APIServerURL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.pki.caPEM},
		QPS:             e.Config.QPS,
		Burst:           e.Config.Burst,
	}
}

// WriteKubeconfig writes a kubeconfig file (mode 0600) that reaches the
// apiserver with the given bearer token, for a child process such as a
// controller binary run with --kubeconfig.
func (e *Env) WriteKubeconfig(path, token string) error {
	if e == nil || e.pki == nil {
		return errors.New("kubetest: WriteKubeconfig on an Env that is not running")
	}
	const name = "kubetest"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: e.APIServerURL, CertificateAuthorityData: e.pki.caPEM}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("kubetest: encode kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("kubetest: write kubeconfig: %w", err)
	}
	return nil
}

// ServiceAccountKubeconfig requests a token for the ServiceAccount
// namespace/name (ServiceAccountToken) and writes a kubeconfig using it to
// path (WriteKubeconfig).
func (e *Env) ServiceAccountKubeconfig(ctx context.Context, namespace, name, path string, expiration time.Duration) error {
	token, err := e.ServiceAccountToken(ctx, namespace, name, expiration)
	if err != nil {
		return err
	}
	return e.WriteKubeconfig(path, token)
}
