package process

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

// Access is one verb on one resource or subresource a controller needs.
// An empty Namespace means all namespaces, an empty Name any name.
type Access struct {
	Group, Resource, Subresource, Verb string
	Namespace, Name                    string
}

// Accesses is one Access per verb on the same resource.
func Accesses(a Access, verbs ...string) []Access {
	out := make([]Access, len(verbs))
	for i, v := range verbs {
		out[i] = a
		out[i].Verb = v
	}
	return out
}

// String reads like the API server's own Forbidden message.
func (a Access) String() string {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	s := fmt.Sprintf("%s resource %q", a.Verb, res)
	if a.Group != "" {
		s += fmt.Sprintf(" in API group %q", a.Group)
	}
	if a.Name != "" {
		s += fmt.Sprintf(" named %q", a.Name)
	}
	if a.Namespace == "" {
		return s + " in all namespaces"
	}
	return s + fmt.Sprintf(" in namespace %q", a.Namespace)
}

// Preflight checks, before any informer starts, that the API server of cfg
// answers and that its user holds every access in need, each request
// bounded by timeout. A misconfigured binary then fails at once, naming the
// server or every missing permission, instead of logging list errors for
// ever.
func Preflight(ctx context.Context, cfg *rest.Config, timeout time.Duration, need []Access) error {
	checkCfg := rest.CopyConfig(cfg)
	checkCfg.Timeout = timeout
	client, err := kubernetes.NewForConfig(checkCfg)
	if err != nil {
		return fmt.Errorf("preflight client: %w", err)
	}
	// The version is the cheapest request any client may make.
	if _, err := client.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("cannot reach the API server at %s: %w", cfg.Host, err)
	}
	return CheckAccess(ctx, client, need)
}

// CheckAccess asks the server, one SelfSubjectAccessReview each, whether the
// client's user holds every access in need, and reports every one missing
// together, so an operator fixes the Role once.
func CheckAccess(ctx context.Context, client kubernetes.Interface, need []Access) error {
	var missing []Access
	for _, a := range need {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: a.Namespace, Verb: a.Verb, Group: a.Group,
				Resource: a.Resource, Subresource: a.Subresource, Name: a.Name,
			},
		}}
		got, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("checking permission to %s: %w", a, err)
		}
		if !got.Status.Allowed {
			missing = append(missing, a)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	user := whoAmI(ctx, client)
	lines := make([]string, len(missing))
	for i, a := range missing {
		lines[i] = fmt.Sprintf("missing permission: %s cannot %s", user, a)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// whoAmI names the client's user for the error message, or says it could
// not: the name helps, but its absence must not hide what is missing.
func whoAmI(ctx context.Context, client kubernetes.Interface) string {
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username == "" {
		return "the configured user"
	}
	return fmt.Sprintf("user %q", r.Status.UserInfo.Username)
}
