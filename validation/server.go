package validation

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"

	"github.com/ctrlkit/ctrlkit/internal/writedeadline"
)

// dryRunGenerateName names the PodTemplate the dry run would create. The
// server generates the rest of the name and stores nothing.
const dryRunGenerateName = "ctrlkit-validate-"

// serverRoot is the path under which the API server reports the template's
// errors: a PodTemplate holds it in its "template" field.
const serverRoot = "template"

// ValidatePodTemplateWithServer has the API server validate template as a
// pod template, which is upstream's ValidatePodTemplateSpec with the
// server's defaults, feature gates and version: it creates a PodTemplate
// holding the template in namespace with dryRun=All, so nothing is stored.
// The create has a deadline (WithWriteTimeout, DefaultWriteTimeout), even if
// the client ignores its context.
//
// A 422 Invalid answer comes back as field errors, their paths moved from
// the PodTemplate's "template" to fldPath ("template.spec.containers[0].image"
// becomes fldPath + ".spec.containers[0].image"), with the server's type and
// message; the rejected value is inside the message only. Any other failure
// (no answer in time, Forbidden because the caller may not create
// podtemplates in namespace, a missing namespace, an admission webhook that
// refuses dry runs) is the error, and the field errors are nil: the template
// was not judged. A nil template is a Required error at fldPath, and an
// empty namespace an error, both without a request.
//
// The caller needs RBAC "create" on "podtemplates" in namespace. Admission
// webhooks for podtemplates see the request, marked as a dry run.
func ValidatePodTemplateWithServer(ctx context.Context, client kubernetes.Interface, namespace string, template *v1.PodTemplateSpec, fldPath *field.Path, opts ...Option) (field.ErrorList, error) {
	if client == nil {
		// A programmer error, reported here rather than in the goroutine
		// the deadline runs the create on, where no caller could recover.
		panic("validation: ValidatePodTemplateWithServer: nil client")
	}
	if template == nil {
		return field.ErrorList{field.Required(fldPath, "")}, nil
	}
	if namespace == "" {
		// PodTemplates are namespaced: without one the request would go to
		// a path the server does not serve, and fail less clearly.
		return nil, errors.New("validation: a dry-run create of a pod template needs a namespace")
	}
	cfg := newConfig(opts)
	podTemplate := &v1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{GenerateName: dryRunGenerateName, Namespace: namespace},
		Template:   *template.DeepCopy(),
	}
	what := fmt.Sprintf("dry-run create of a pod template in namespace %q", namespace)
	_, err := writedeadline.Call(ctx, cfg.timeout, what, func(ctx context.Context) (*v1.PodTemplate, error) {
		created, err := client.CoreV1().PodTemplates(namespace).Create(ctx, podTemplate,
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && !apierrors.IsInvalid(err) {
			// Say what was asked; writedeadline's own error already does.
			err = fmt.Errorf("%s: %w", what, err)
		}
		return created, err
	})
	if err == nil {
		return nil, nil
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return nil, fmt.Errorf("validation: %w", err)
	}
	return statusFieldErrors(status.Status(), fldPath), nil
}

// statusFieldErrors turns an Invalid status into field errors under fldPath.
// A status without causes still says why; it becomes one error at fldPath.
func statusFieldErrors(status metav1.Status, fldPath *field.Path) field.ErrorList {
	var causes []metav1.StatusCause
	if status.Details != nil {
		causes = status.Details.Causes
	}
	if len(causes) == 0 {
		return field.ErrorList{{
			Type:     field.ErrorTypeInvalid,
			Field:    rebase("", fldPath),
			BadValue: field.OmitValueType{},
			Detail:   status.Message,
		}}
	}
	errs := make(field.ErrorList, 0, len(causes))
	for _, cause := range causes {
		errs = append(errs, causeFieldError(cause, fldPath))
	}
	return errs
}

// causeFieldError rebuilds the field error a cause was made from. The
// server sends the type, the path and the error's body ("<type text>: <value>:
// <detail>"), not the value itself; the body after the type text becomes the
// detail, and the value is left out, so Error() reads as the server's
// message did. A type this version of apimachinery does not know (a newer
// server's) can't render its own text: it becomes Invalid, with the
// server's whole message as the detail.
func causeFieldError(cause metav1.StatusCause, fldPath *field.Path) *field.Error {
	typ := field.ErrorType(cause.Type)
	detail := cause.Message
	text := typ.String()
	// apimachinery renders a type it does not know as "<unknown error ...>".
	if strings.HasPrefix(text, "<unknown error") || typ == "" {
		typ = field.ErrorTypeInvalid
	} else if rest, ok := strings.CutPrefix(detail, text); ok {
		detail = strings.TrimPrefix(rest, ": ")
	}
	return &field.Error{
		Type:     typ,
		Field:    rebase(cause.Field, fldPath),
		BadValue: field.OmitValueType{},
		Detail:   detail,
	}
}

// rebase moves a path the server reported under the PodTemplate's
// "template" field to fldPath. A path outside it (the PodTemplate's own
// metadata, which this package sets) is kept as the server wrote it; a cause
// without a path is put at fldPath. A nil fldPath makes the template's paths
// relative: "spec.containers[0].image".
func rebase(serverField string, fldPath *field.Path) string {
	rest := ""
	if serverField != "" {
		r, under := strings.CutPrefix(serverField, serverRoot)
		if !under || (r != "" && r[0] != '.' && r[0] != '[') {
			return serverField
		}
		rest = r
	}
	if fldPath == nil {
		return strings.TrimPrefix(rest, ".")
	}
	return fldPath.String() + rest
}
