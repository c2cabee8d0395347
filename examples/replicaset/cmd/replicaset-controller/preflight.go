package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// preflightTimeout bounds each request of the startup checks, so that a
// server that does not answer is reported in seconds rather than after the
// informers have retried for minutes.
const preflightTimeout = 10 * time.Second

// preflight checks, before any informer starts, that the API server answers
// and that the configured user may do everything the controller will do. A
// misconfigured binary then fails at once with a message naming the server
// or every missing permission, instead of logging list errors forever.
func preflight(ctx context.Context, cfg *rest.Config, o options, timeout time.Duration) error {
	checkCfg := rest.CopyConfig(cfg)
	checkCfg.Timeout = timeout
	client, err := kubernetes.NewForConfig(checkCfg)
	if err != nil {
		return err
	}
	if err := checkReachable(client, cfg.Host); err != nil {
		return err
	}
	return checkPermissions(ctx, client, requiredPermissions(o))
}

// checkReachable asks the server for its version, the cheapest request every
// authenticated or anonymous client may make.
func checkReachable(client kubernetes.Interface, host string) error {
	if _, err := client.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("cannot reach the API server at %s: %w", host, err)
	}
	return nil
}

// accessRule is one verb on one resource (or subresource) the controller needs.
type accessRule struct {
	group, resource, subresource, verb string
	namespace, name                    string // empty: all namespaces, any name
}

// String reads like the API server's own Forbidden message.
func (p accessRule) String() string {
	res := p.resource
	if p.subresource != "" {
		res += "/" + p.subresource
	}
	s := fmt.Sprintf("%s resource %q", p.verb, res)
	if p.group != "" {
		s += fmt.Sprintf(" in API group %q", p.group)
	}
	if p.name != "" {
		s += fmt.Sprintf(" named %q", p.name)
	}
	if p.namespace == "" {
		return s + " in all namespaces"
	}
	return s + fmt.Sprintf(" in namespace %q", p.namespace)
}

// requiredPermissions lists what the controller for o.kind does, the same
// rules deploy/rbac-base.yaml and deploy/rbac-<kind>.yaml grant.
func requiredPermissions(o options) []accessRule {
	ns := o.namespace
	group, owner := kinds[o.kind].group, kinds[o.kind].resource
	var perms []accessRule
	for _, verb := range []string{"list", "watch", "create", "delete", "patch"} {
		perms = append(perms, accessRule{resource: "pods", verb: verb, namespace: ns})
	}
	// get: adoption re-reads the owner uncached before claiming a pod, and
	// a conflicting status update re-reads it before retrying.
	for _, verb := range []string{"get", "list", "watch"} {
		perms = append(perms, accessRule{group: group, resource: owner, verb: verb, namespace: ns})
	}
	for _, sub := range []string{"status", "finalizers"} {
		perms = append(perms, accessRule{group: group, resource: owner, subresource: sub, verb: "update", namespace: ns})
	}
	for _, verb := range []string{"create", "patch"} {
		perms = append(perms, accessRule{resource: "events", verb: verb, namespace: ns})
	}
	if o.lease.enabled {
		l := accessRule{group: "coordination.k8s.io", resource: "leases", namespace: o.lease.namespace}
		for _, verb := range []string{"get", "update"} {
			named := l
			named.verb, named.name = verb, o.lease.name
			perms = append(perms, named)
		}
		l.verb = "create"
		perms = append(perms, l)
	}
	if o.shard.enabled() {
		// Every member writes its own Lease, named after its identity,
		// and lists the ring's; the names vary with the pods', so no rule
		// can name them.
		for _, verb := range shardLeaseVerbs {
			perms = append(perms, accessRule{group: "coordination.k8s.io", resource: "leases", verb: verb, namespace: o.shard.namespace})
		}
	}
	return perms
}

// checkPermissions asks the server, one SelfSubjectAccessReview each, whether
// the configured user holds every permission, and reports all that are
// missing together, so an operator fixes the Role once.
// shardLeaseVerbs are the Lease verbs a ring member uses: get its own Lease
// when it joins, create and update (renew) it, list the ring's, and delete
// its own when it leaves.
var shardLeaseVerbs = []string{"get", "list", "create", "update", "delete"}

func checkPermissions(ctx context.Context, client kubernetes.Interface, perms []accessRule) error {
	var missing []string
	for _, p := range perms {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: p.namespace, Verb: p.verb, Group: p.group,
				Resource: p.resource, Subresource: p.subresource, Name: p.name,
			},
		}}
		got, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("checking permission to %s: %w", p, err)
		}
		if !got.Status.Allowed {
			missing = append(missing, p.String())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	user := whoAmI(ctx, client)
	lines := make([]string, len(missing))
	for i, m := range missing {
		lines[i] = fmt.Sprintf("missing permission: %s cannot %s", user, m)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// whoAmI names the configured user for the error message, or says it could
// not: the name helps, but its absence must not hide the missing permissions.
func whoAmI(ctx context.Context, client kubernetes.Interface) string {
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username == "" {
		return "the configured user"
	}
	return fmt.Sprintf("user %q", r.Status.UserInfo.Username)
}
