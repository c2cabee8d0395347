package binary

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The shipped manifest and the names it declares.
const (
	deployDir           = repoRoot + "/examples/replicaset/deploy"
	controllerNamespace = "ctrlkit-system"
	controllerAccount   = "ctrlkit-replicaset-controller"
	controllerLeaseName = "ctrlkit-replicaset-controller"
	tokenLifetime       = time.Hour
	// rbacManifestEnv names other manifests to apply instead (another
	// revision's, say; several separated by the OS's path-list separator),
	// to go with CTRLKIT_E2E_CONTROLLER_BINARY.
	rbacManifestEnv = "CTRLKIT_E2E_RBAC_MANIFEST"
)

// rbacManifests are the shipped RBAC files the scenarios need: the
// ServiceAccount and its Lease, and the cluster-wide roles of both kinds,
// since the scenarios run the controller of each.
var rbacManifests = []string{
	deployDir + "/rbac-base.yaml",
	deployDir + "/rbac-replicaset.yaml",
	deployDir + "/rbac-replicationcontroller.yaml",
	deployDir + "/rbac-shard.yaml",
}

// identity is a ServiceAccount's bearer token, good for writing kubeconfigs
// that point at the apiserver or at a proxy in front of it.
type identity struct {
	user  string
	token string
	// kubeconfig is the file that reaches the apiserver directly.
	kubeconfig string
}

// setUpShippedIdentity applies the shipped RBAC files (rbacManifests),
// which also create the ServiceAccount and its namespace, gets a token for
// the account through the TokenRequest API, and writes the kubeconfig an
// operator would hand the binary.
func setUpShippedIdentity(ctx context.Context, dir string) (*identity, error) {
	manifests := rbacManifests
	if paths := os.Getenv(rbacManifestEnv); paths != "" {
		manifests = filepath.SplitList(paths)
	}
	for _, manifest := range manifests {
		if _, err := env.ApplyManifestFile(ctx, manifest); err != nil {
			return nil, fmt.Errorf("apply %s: %w", manifest, err)
		}
	}
	return newIdentity(ctx, controllerNamespace, controllerAccount, filepath.Join(dir, "kubeconfig"))
}

// newIdentity gets a token for the existing ServiceAccount namespace/name
// and writes a kubeconfig with it to path.
func newIdentity(ctx context.Context, namespace, name, path string) (*identity, error) {
	token, err := env.ServiceAccountToken(ctx, namespace, name, tokenLifetime)
	if err != nil {
		return nil, err
	}
	if err := env.WriteKubeconfig(path, token); err != nil {
		return nil, err
	}
	return &identity{user: serviceaccount.MakeUsername(namespace, name), token: token, kubeconfig: path}, nil
}

// writeKubeconfig writes a kubeconfig file that reaches server, trusting
// caPEM, with this identity's token, and returns its path: for a proxy in
// front of the apiserver, or a server that is not there.
func (id *identity) writeKubeconfig(path, server string, caPEM []byte) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["controller"] = &clientcmdapi.AuthInfo{Token: id.token}
	cfg.Contexts["kubetest"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "controller"}
	cfg.CurrentContext = "kubetest"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

func newServiceAccount(name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
