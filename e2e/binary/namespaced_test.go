package binary

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// namespacedManifest is the shipped Role and RoleBinding for a ReplicaSet
// controller run with --namespace.
const namespacedManifest = deployDir + "/rbac-replicaset-namespaced.yaml"

// TestNamespacedRBAC applies the shipped namespaced variant in the
// scenario's namespace, bound to an account of its own (the shipped one
// holds the cluster-wide roles here): the apiserver's authorizer grants that
// account the controller's verbs in its namespace and none in another or
// cluster-wide, a controller run with --namespace works under it, and one
// run without fails its preflight.
func TestNamespacedRBAC(t *testing.T) {
	s := newScenario(t, scenarioTimeout)
	const account = "ctrlkit-namespaced"
	_, err := s.client.CoreV1().ServiceAccounts(s.ns).Create(s.ctx, newServiceAccount(account), metav1.CreateOptions{})
	require.NoError(t, err)
	s.applyNamespacedRBAC(account)
	id, err := newIdentity(s.ctx, s.ns, account, t.TempDir()+"/namespaced.kubeconfig")
	require.NoError(t, err)
	other, err := s.client.CoreV1().Namespaces().Create(s.ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "namespaced-rbac-other-"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	allowed := func(namespace, verb, group, resource string) bool {
		review, err := s.client.AuthorizationV1().SubjectAccessReviews().Create(s.ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User: id.user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + s.ns, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Group: group, Resource: resource},
			},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		return review.Status.Allowed
	}
	checks := []struct{ verb, group, resource string }{
		{"list", "", "pods"}, {"create", "", "pods"}, {"delete", "", "pods"},
		{"watch", "apps", "replicasets"}, {"get", "apps", "replicasets"}, {"create", "", "events"},
	}
	for _, c := range checks {
		require.True(t, allowed(s.ns, c.verb, c.group, c.resource), "%s %s in its own namespace", c.verb, c.resource)
		require.False(t, allowed(other.Name, c.verb, c.group, c.resource), "%s %s in another namespace", c.verb, c.resource)
		require.False(t, allowed("", c.verb, c.group, c.resource), "%s %s in all namespaces", c.verb, c.resource)
	}

	// Without --namespace the binary needs every namespace: preflight
	// refuses to start.
	all := startController(t, "all-namespaces", "--kubeconfig="+id.kubeconfig, "--v=2")
	require.NotZero(t, all.wait(t, failFastBound), "a namespaced identity passed the all-namespaces preflight")
	require.Regexp(t, missingPermission, all.output())

	pods := s.watchPods()
	p := startController(t, "namespaced", s.controllerArgs(id.kubeconfig)...)
	p.waitReady(s.ctx, t)
	pods.limit("web", 5)
	s.createReplicaSet("web", 5)
	s.waitFor("5 pods and their status", s.replicaSetSettled("web", 5, pods))
	p.signal(t, syscall.SIGTERM)
	require.Equal(t, 0, p.wait(t, 40*time.Second), "exit code after SIGTERM")
	requireNoForbidden(t, p)
}

// applyNamespacedRBAC creates the objects of namespacedManifest in the
// scenario's namespace, as kubectl apply -n would, with the RoleBinding's
// subject replaced by account.
func (s *scenario) applyNamespacedRBAC(account string) {
	s.t.Helper()
	data, err := os.ReadFile(namespacedManifest)
	require.NoError(s.t, err)
	objs := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw runtime.RawExtension
		err := objs.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return
		}
		require.NoError(s.t, err)
		if len(raw.Raw) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw.Raw, nil, nil)
		require.NoError(s.t, err)
		switch o := obj.(type) {
		case *rbacv1.Role:
			require.Empty(s.t, o.Namespace, "the shipped Role names a namespace")
			_, err = s.client.RbacV1().Roles(s.ns).Create(s.ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			require.Empty(s.t, o.Namespace, "the shipped RoleBinding names a namespace")
			o.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: s.ns}}
			_, err = s.client.RbacV1().RoleBindings(s.ns).Create(s.ctx, o, metav1.CreateOptions{})
		default:
			s.t.Fatalf("%s holds a %T", namespacedManifest, obj)
		}
		require.NoError(s.t, err)
	}
}
