package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
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

func TestCheckPermissionsAllowed(t *testing.T) {
	for _, kind := range []string{kindReplicaSet, kindReplicationController} {
		o := options{kind: kind}
		o.lease = leaseConfig{enabled: true, namespace: "kube-system", name: "lock"}
		cs := reviewingClient("alice", func(*authorizationv1.ResourceAttributes) bool { return true })
		require.NoError(t, checkPermissions(context.Background(), cs, requiredPermissions(o)), kind)
		// Every needed rule was asked about, leases included.
		require.Len(t, cs.Actions(), len(requiredPermissions(o)), kind)
	}
}

func TestCheckPermissionsNamesEveryMissingOne(t *testing.T) {
	o := options{kind: kindReplicaSet, namespace: "team-a"}
	deny := map[string]bool{"list/pods": true, "update/replicasets/status": true}
	cs := reviewingClient("system:serviceaccount:team-a:bot", func(r *authorizationv1.ResourceAttributes) bool {
		key := r.Verb + "/" + r.Resource
		if r.Subresource != "" {
			key += "/" + r.Subresource
		}
		return !deny[key]
	})
	err := checkPermissions(context.Background(), cs, requiredPermissions(o))
	require.Error(t, err)
	msg := err.Error()
	t.Log(msg)
	require.Equal(t, 2, strings.Count(msg, "missing permission: "))
	require.Contains(t, msg, `user "system:serviceaccount:team-a:bot" cannot list resource "pods" in namespace "team-a"`)
	require.Contains(t, msg, `cannot update resource "replicasets/status" in API group "apps" in namespace "team-a"`)
	// The e2e test matches the API server's own wording.
	require.Regexp(t, regexp.MustCompile(`cannot (list|update) resource "[a-z/]+"`), msg)
	require.NotContains(t, msg, "watch")
}

func TestCheckPermissionsWithoutUserName(t *testing.T) {
	cs := reviewingClient("", func(r *authorizationv1.ResourceAttributes) bool { return r.Verb != "watch" })
	err := checkPermissions(context.Background(), cs, requiredPermissions(options{kind: kindReplicationController}))
	require.ErrorContains(t, err, `missing permission: the configured user cannot watch resource "pods" in all namespaces`)
	require.ErrorContains(t, err, `cannot watch resource "replicationcontrollers" in all namespaces`)
}

func TestPreflightUnreachableServer(t *testing.T) {
	// A server that accepts connections but never answers: only the
	// client timeout ends the check.
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)

	start := time.Now()
	cfg := &rest.Config{Host: srv.URL}
	err := preflight(context.Background(), cfg, options{kind: kindReplicaSet}, 500*time.Millisecond)
	require.ErrorContains(t, err, "cannot reach the API server at "+srv.URL)
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestPreflightClosedPort(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	err := preflight(context.Background(), &rest.Config{Host: url}, options{kind: kindReplicaSet}, preflightTimeout)
	require.ErrorContains(t, err, "cannot reach the API server at "+url)
}

// TestPreflightNamesMissingOwnerGet: a Role without get on the owner kind
// would pass the list and watch checks and fail at the first adoption (its
// uncached re-read) or the first status conflict; preflight refuses it.
func TestPreflightNamesMissingOwnerGet(t *testing.T) {
	cases := []struct{ kind, want string }{
		{kindReplicaSet, `cannot get resource "replicasets" in API group "apps" in namespace "team-a"`},
		{kindReplicationController, `cannot get resource "replicationcontrollers" in namespace "team-a"`},
	}
	for _, tc := range cases {
		cs := reviewingClient("bot", func(r *authorizationv1.ResourceAttributes) bool {
			return r.Verb != "get" || r.Resource == "leases"
		})
		err := checkPermissions(context.Background(), cs, requiredPermissions(options{kind: tc.kind, namespace: "team-a"}))
		require.ErrorContains(t, err, tc.want, tc.kind)
		require.Equal(t, 1, strings.Count(err.Error(), "missing permission: "), tc.kind)
	}
}
