package process

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// reviewingClient answers SelfSubjectAccessReviews by allowed and
// SelfSubjectReviews with user.
func reviewingClient(user string, allowed func(*authorizationv1.ResourceAttributes) bool) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = allowed(r.Spec.ResourceAttributes)
		return true, r, nil
	})
	cs.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		r := &authenticationv1.SelfSubjectReview{}
		r.Status.UserInfo.Username = user
		return true, r, nil
	})
	return cs
}

var need = append(Accesses(Access{Resource: "pods", Namespace: "team-a"}, "list", "watch"),
	Access{Group: "apps", Resource: "replicasets", Subresource: "status", Verb: "update", Namespace: "team-a"},
	Access{Group: "coordination.k8s.io", Resource: "leases", Verb: "get", Namespace: "kube-system", Name: "lock"})

func TestCheckAccessAllowed(t *testing.T) {
	cs := reviewingClient("alice", func(*authorizationv1.ResourceAttributes) bool { return true })
	require.NoError(t, CheckAccess(context.Background(), cs, need))
	require.Len(t, cs.Actions(), len(need), "one review per access")
}

func TestCheckAccessNamesEveryMissingOne(t *testing.T) {
	cs := reviewingClient("system:serviceaccount:team-a:bot", func(r *authorizationv1.ResourceAttributes) bool {
		return r.Verb == "watch"
	})
	err := CheckAccess(context.Background(), cs, need)
	require.Error(t, err)
	msg := err.Error()
	require.Equal(t, 3, strings.Count(msg, "missing permission: "), msg)
	require.Contains(t, msg, `user "system:serviceaccount:team-a:bot" cannot list resource "pods" in namespace "team-a"`)
	require.Contains(t, msg, `cannot update resource "replicasets/status" in API group "apps" in namespace "team-a"`)
	require.Contains(t, msg, `cannot get resource "leases" in API group "coordination.k8s.io" named "lock" in namespace "kube-system"`)
	require.NotContains(t, msg, "watch")
}

func TestCheckAccessWithoutUserName(t *testing.T) {
	cs := reviewingClient("", func(r *authorizationv1.ResourceAttributes) bool { return r.Verb != "watch" })
	err := CheckAccess(context.Background(), cs, Accesses(Access{Resource: "pods"}, "list", "watch"))
	require.EqualError(t, err, `missing permission: the configured user cannot watch resource "pods" in all namespaces`)
}

func TestPreflightUnreachableServer(t *testing.T) {
	// A server that accepts connections but never answers: only the
	// client timeout ends the check.
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	start := time.Now()
	err := Preflight(context.Background(), &rest.Config{Host: srv.URL}, 500*time.Millisecond, need)
	require.ErrorContains(t, err, "cannot reach the API server at "+srv.URL)
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestPreflightClosedPort(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	err := Preflight(context.Background(), &rest.Config{Host: url}, 10*time.Second, need)
	require.ErrorContains(t, err, "cannot reach the API server at "+url)
}
