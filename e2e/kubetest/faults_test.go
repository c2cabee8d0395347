package kubetest

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// testManifest grants its service account read access to pods in one
// namespace and nothing else.
const testManifest = `
# a comment-only document is skipped
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: reader
  namespace: kubetest-rbac
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: kubetest-rbac
rules:
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["get", "list", "create"]
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: pod-reader
  namespace: kubetest-rbac
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: pod-reader
subjects:
  - kind: ServiceAccount
    name: reader
    namespace: kubetest-rbac
`

// TestRBACAndFaults runs one RBAC-authorizing control plane through every
// helper: manifests, impersonation, service-account tokens and kubeconfigs,
// owner-reference admission, CRDs, an apiserver restart and an etcd
// compaction.
func TestRBACAndFaults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Start, not StartT: Stop must run before the goroutine check, and
	// StartT's cleanup would run after this function's defers.
	env, err := Start(ctx, WithLogf(t.Logf), WithRBAC(), WithAPIServerFlags("--watch-cache=false"))
	require.NoError(t, err)
	defer func() { assert.NoError(t, env.Stop()) }()

	adminCfg, closeAdmin, err := env.ClientConfig(nil)
	require.NoError(t, err)
	defer closeAdmin()
	admin, err := kubernetes.NewForConfig(adminCfg)
	require.NoError(t, err)

	objs, err := env.ApplyManifest(ctx, []byte(testManifest))
	require.NoError(t, err)
	require.Len(t, objs, 3)
	assert.Equal(t, "ServiceAccount", objs[0].GetKind())
	assert.NotEmpty(t, objs[0].GetUID(), "returned as stored")
	_, err = env.ApplyManifest(ctx, []byte(testManifest))
	require.NoError(t, err, "applying again replaces")
	_, err = env.ApplyManifest(ctx, []byte("apiVersion: v1\nmetadata: {name: x}\n"))
	assert.ErrorContains(t, err, "no apiVersion or kind")

	const ns = "kubetest-rbac"
	owner, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	t.Run("impersonation", func(t *testing.T) {
		client, err := kubernetes.NewForConfig(ImpersonationConfig(adminCfg, ns, "reader"))
		require.NoError(t, err)
		checkReader(ctx, t, client, ns, owner)
	})

	t.Run("token and kubeconfig", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "kubeconfig")
		require.NoError(t, env.ServiceAccountKubeconfig(ctx, ns, "reader", path, time.Hour))
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		require.NoError(t, err)
		assert.Empty(t, cfg.Impersonate.UserName)
		tr, closeIdle := privateTransport(t, cfg)
		defer closeIdle()
		cfg.Transport, cfg.TLSClientConfig = tr, rest.TLSClientConfig{}
		client, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "system:serviceaccount:kubetest-rbac:reader", review.Status.UserInfo.Username)
		checkReader(ctx, t, client, ns, owner)

		_, err = env.ServiceAccountToken(ctx, ns, "missing", time.Hour)
		assert.True(t, apierrors.IsNotFound(err), "token for a missing account: %v", err)
	})

	t.Run("CRD", func(t *testing.T) {
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets.kubetest.example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "kubetest.example.com",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true),
					}},
				}},
			},
		}
		require.NoError(t, env.InstallCRDs(ctx, crd))
		objs, err := env.ApplyManifest(ctx, []byte("apiVersion: kubetest.example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: widgets}\nspec: {size: 3}\n"))
		require.NoError(t, err, "the new kind is served once InstallCRDs returns")
		assert.Equal(t, "widgets", objs[0].GetNamespace(), "the namespace was created")

		yamlCRD := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.kubetest.example.com}
spec:
  group: kubetest.example.com
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  scope: Cluster
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
		require.NoError(t, env.InstallCRDsFromYAML(ctx, []byte(yamlCRD)))
		dyn, err := dynamic.NewForConfig(adminCfg)
		require.NoError(t, err)
		_, err = dyn.Resource(schema.GroupVersionResource{Group: "kubetest.example.com", Version: "v1", Resource: "gadgets"}).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.ErrorContains(t, env.InstallCRDsFromYAML(ctx, []byte(testManifest)), "is not an apiextensions.k8s.io/v1 CustomResourceDefinition")
	})

	t.Run("compaction expires old resource versions", func(t *testing.T) {
		list, err := admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		// etcd keeps the compaction revision itself, and a watch from
		// resourceVersion N reads from N+1: two writes put N+1 below it.
		for _, name := range []string{"later", "later-still"} {
			_, err = admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		rev, err := env.CompactEtcd(ctx)
		require.NoError(t, err)
		assert.Positive(t, rev)
		w, err := admin.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		require.NoError(t, err)
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			require.Equal(t, watch.Error, ev.Type, "a watch from before the compaction: %v", ev.Object)
			status, ok := ev.Object.(*metav1.Status)
			require.True(t, ok)
			assert.Equal(t, int32(http.StatusGone), status.Code, "%+v", status)
		case <-ctx.Done():
			t.Fatal("no event from a watch starting before the compaction")
		}
	})

	t.Run("restart keeps data, port and clients", func(t *testing.T) {
		url := env.APIServerURL
		begin := time.Now()
		require.NoError(t, env.RestartAPIServer(ctx))
		t.Logf("restart took %s", time.Since(begin))
		assert.Equal(t, url, env.APIServerURL)
		got, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
		require.NoError(t, err, "the client made before the restart works after it")
		assert.Equal(t, owner.UID, got.UID)

		require.NoError(t, env.StopAPIServer())
		require.NoError(t, env.StopAPIServer(), "stopping twice is fine")
		_, err = admin.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
		assert.Error(t, err, "nothing answers while stopped")
		require.NoError(t, env.StartAPIServer(ctx))
		require.NoError(t, env.StartAPIServer(ctx), "starting a running apiserver does nothing")
		_, err = admin.CoreV1().ConfigMaps(ns).Get(ctx, "owner", metav1.GetOptions{})
		require.NoError(t, err)
	})
}

// checkReader checks what the reader account's roles allow and refuse.
func checkReader(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, owner *corev1.ConfigMap) {
	t.Helper()
	_, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "granted by the Role")
	_, err = client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "another namespace: %v", err)
	err = client.CoreV1().Pods(ns).Delete(ctx, "x", metav1.DeleteOptions{})
	assert.True(t, apierrors.IsForbidden(err), "a verb the Role lacks: %v", err)

	// OwnerReferencesPermissionEnforcement: blockOwnerDeletion needs
	// "update" on the owner's finalizers, which the Role does not grant.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "owned-", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	_, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	assert.True(t, apierrors.IsForbidden(err), "blockOwnerDeletion without finalizers permission: %v", err)
	assert.ErrorContains(t, err, "cannot set blockOwnerDeletion")
	pod.OwnerReferences[0].BlockOwnerDeletion = nil
	_, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	assert.NoError(t, err, "the same create without blockOwnerDeletion is allowed")
}

// privateTransport gives cfg its own transport, closed by the returned
// function, so the goroutine check sees no connection left behind.
func privateTransport(t *testing.T, cfg *rest.Config) (http.RoundTripper, func()) {
	t.Helper()
	tlsConfig, err := rest.TLSConfigFor(cfg)
	require.NoError(t, err)
	tr := &http.Transport{TLSClientConfig: tlsConfig}
	return tr, tr.CloseIdleConnections
}
