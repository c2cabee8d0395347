package binary

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// rbacAPIServerFlags make the apiserver authorize as a production cluster
// does, and enforce that whoever sets blockOwnerDeletion on an owner
// reference may update the owner's finalizers. Both are off in kubetest's
// default mode, where every client is allowed everything.
var rbacAPIServerFlags = []string{
	"--authorization-mode=RBAC",
	"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
}

// The shipped manifest and the names it declares.
const (
	rbacManifest         = repoRoot + "/examples/replicaset/deploy/rbac.yaml"
	controllerNamespace  = "ctrlkit-system"
	controllerAccount    = "ctrlkit-replicaset-controller"
	controllerLeaseName  = "ctrlkit-replicaset-controller"
	tokenLifetimeSeconds = 3600
)

// identity is a ServiceAccount's bearer token, good for writing kubeconfigs
// that point at the apiserver or at a proxy in front of it.
type identity struct {
	user  string
	token string
	// kubeconfig is the file that reaches the apiserver directly.
	kubeconfig string
}

// setUpShippedIdentity applies deploy/rbac.yaml from the file, which also
// creates the ServiceAccount, and gets a token for it through the
// TokenRequest API.
func setUpShippedIdentity(ctx context.Context, dir string) (*identity, error) {
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return nil, err
	}
	if err := createNamespace(ctx, admin, controllerNamespace); err != nil {
		return nil, err
	}
	manifest, err := os.ReadFile(rbacManifest)
	if err != nil {
		return nil, err
	}
	if err := applyManifest(ctx, env.Config, manifest); err != nil {
		return nil, fmt.Errorf("apply %s: %w", rbacManifest, err)
	}
	id, err := requestToken(ctx, admin, controllerNamespace, controllerAccount)
	if err != nil {
		return nil, err
	}
	// The file the operator would use, pointing straight at the apiserver.
	if id.kubeconfig, err = id.writeKubeconfig(filepath.Join(dir, "kubeconfig"), env.APIServerURL, env.Config.CAData); err != nil {
		return nil, err
	}
	return id, nil
}

func createNamespace(ctx context.Context, c kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// applyManifest server-side applies every document of a multi-document YAML
// manifest, as `kubectl apply --server-side -f` would.
func applyManifest(ctx context.Context, cfg *rest.Config, manifest []byte) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		var obj unstructured.Unstructured
		if err := decoder.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("decode: %w", err)
		}
		if len(obj.Object) == 0 {
			continue // an empty document between separators
		}
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("map %s: %w", gvk, err)
		}
		var res dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			res = dyn.Resource(mapping.Resource).Namespace(ns)
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			return err
		}
		_, err = res.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "ctrlkit-e2e", Force: ptr.To(true)})
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
}

// requestToken gets a bound token for an existing ServiceAccount through the
// TokenRequest API, as kubelet does for a pod.
func requestToken(ctx context.Context, c kubernetes.Interface, namespace, account string) (*identity, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](tokenLifetimeSeconds)}}
	resp, err := c.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, account, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token request for %s/%s: %w", namespace, account, err)
	}
	return &identity{user: "system:serviceaccount:" + namespace + ":" + account, token: resp.Status.Token}, nil
}

// writeKubeconfig writes a kubeconfig file that reaches server, trusting
// caPEM, with this identity's token, and returns its path.
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

var createOpts = metav1.CreateOptions{}

func newServiceAccount(name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
