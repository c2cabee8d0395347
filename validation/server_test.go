package validation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

var podTemplateKind = schema.GroupKind{Kind: "PodTemplate"}

// answer makes the fake API server answer every podtemplate create with
// err (nil: the object sent back) and records what it was sent.
func answer(client *fake.Clientset, err error, sent *[]clienttesting.CreateActionImpl) {
	client.PrependReactor("create", "podtemplates", func(action clienttesting.Action) (bool, runtime.Object, error) {
		create := action.(clienttesting.CreateActionImpl)
		if sent != nil {
			*sent = append(*sent, create)
		}
		if err != nil {
			return true, nil, err
		}
		return true, create.GetObject(), nil
	})
}

func TestValidatePodTemplateWithServerValid(t *testing.T) {
	client := fake.NewClientset()
	var sent []clienttesting.CreateActionImpl
	answer(client, nil, &sent)
	template := validTemplate()

	errs, err := ValidatePodTemplateWithServer(context.Background(), client, "ns", template, field.NewPath("spec", "template"))
	require.NoError(t, err)
	assert.Empty(t, errs)

	require.Len(t, sent, 1)
	assert.Equal(t, "ns", sent[0].GetNamespace())
	assert.Equal(t, []string{metav1.DryRunAll}, sent[0].GetCreateOptions().DryRun, "nothing may be stored")
	pt := sent[0].GetObject().(*v1.PodTemplate)
	assert.Equal(t, dryRunGenerateName, pt.GenerateName)
	assert.Equal(t, "ns", pt.Namespace)
	assert.Equal(t, *template, pt.Template)
	assert.NotSame(t, &template.Spec.Containers[0], &pt.Template.Spec.Containers[0], "the caller's template is copied, not shared")
}

// TestValidatePodTemplateWithServerInvalid answers as the API server does:
// apierrors.NewInvalid over the field errors of ValidatePodTemplate, whose
// paths start at the PodTemplate's "template".
func TestValidatePodTemplateWithServerInvalid(t *testing.T) {
	server := field.NewPath("template")
	containers := server.Child("spec", "containers")
	serverErrs := field.ErrorList{
		field.Required(containers.Index(0).Child("image"), ""),
		field.Invalid(containers.Index(0).Child("name"), "Bad_Name", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"),
		field.NotSupported(server.Child("spec", "dnsPolicy"), v1.DNSPolicy("Sometimes"), []string{"ClusterFirst", "Default", "None"}),
		field.Forbidden(server.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"),
		field.TooLong(server.Child("metadata", "labels"), "", 63),
		field.Duplicate(containers.Index(1).Child("name"), "ctr"),
		field.Invalid(server, "", "whole template"),
		field.Invalid(field.NewPath("metadata", "generateName"), "x", "the PodTemplate's own field"),
	}
	fldPath := field.NewPath("spec", "template")
	want := []string{
		"spec.template.spec.containers[0].image: Required value",
		`spec.template.spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
		`spec.template.spec.dnsPolicy: Unsupported value: "Sometimes": supported values: "ClusterFirst", "Default", "None"`,
		"spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template",
		serverErrs[4].ErrorBody(), // TooLong's text changed between apimachinery versions
		`spec.template.spec.containers[1].name: Duplicate value: "ctr"`,
		`spec.template: Invalid value: "": whole template`,
		`metadata.generateName: Invalid value: "x": the PodTemplate's own field`,
	}
	want[4] = "spec.template.metadata.labels: " + want[4]

	client := fake.NewClientset()
	answer(client, apierrors.NewInvalid(podTemplateKind, "ctrlkit-validate-abcde", serverErrs), nil)
	errs, err := ValidatePodTemplateWithServer(context.Background(), client, "ns", validTemplate(), fldPath)
	require.NoError(t, err, "an Invalid answer is a judgement, not a failure to ask")
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	assert.Equal(t, want, got)
	for i, e := range errs {
		assert.Equal(t, serverErrs[i].Type, e.Type, "type of %s", e.Field)
	}

	// Without a path the template's paths are relative.
	errs, err = ValidatePodTemplateWithServer(context.Background(), client, "ns", validTemplate(), nil)
	require.NoError(t, err)
	assert.Equal(t, "spec.containers[0].image", errs[0].Field)
	assert.Equal(t, "", errs[6].Field)
	assert.Equal(t, "metadata.generateName", errs[7].Field)
}

func TestValidatePodTemplateWithServerOddAnswers(t *testing.T) {
	fldPath := field.NewPath("spec", "template")

	// A cause of a type this apimachinery does not know (a newer server's)
	// keeps the server's whole message.
	future := apierrors.NewInvalid(podTemplateKind, "x", nil)
	future.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: "FieldValueFromTheFuture", Field: "template.spec.containers", Message: "From the future: may not be so",
	}, {
		Type: "", Field: "template.spec", Message: "no type at all",
	}}
	client := fake.NewClientset()
	answer(client, future, nil)
	errs, err := ValidatePodTemplateWithServer(context.Background(), client, "ns", validTemplate(), fldPath)
	require.NoError(t, err)
	require.Len(t, errs, 2)
	assert.Equal(t, field.ErrorTypeInvalid, errs[0].Type)
	assert.Equal(t, "spec.template.spec.containers: Invalid value: From the future: may not be so", errs[0].Error())
	assert.Equal(t, "spec.template.spec: Invalid value: no type at all", errs[1].Error())

	// An Invalid status without causes still says why.
	bare := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: "PodTemplate is invalid",
	}}
	client = fake.NewClientset()
	answer(client, bare, nil)
	errs, err = ValidatePodTemplateWithServer(context.Background(), client, "ns", validTemplate(), fldPath)
	require.NoError(t, err)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.template: Invalid value: PodTemplate is invalid", errs[0].Error())
}

func TestValidatePodTemplateWithServerFailures(t *testing.T) {
	fldPath := field.NewPath("spec", "template")

	t.Run("forbidden", func(t *testing.T) {
		client := fake.NewClientset()
		answer(client, apierrors.NewForbidden(schema.GroupResource{Resource: "podtemplates"}, "", errors.New("RBAC says no")), nil)
		errs, err := ValidatePodTemplateWithServer(context.Background(), client, "ns", validTemplate(), fldPath)
		require.Error(t, err)
		assert.Nil(t, errs, "a template the server did not judge has no field errors")
		assert.True(t, apierrors.IsForbidden(err), "the API error is wrapped: %v", err)
		assert.Contains(t, err.Error(), `validation: dry-run create of a pod template in namespace "ns": `)
	})

	t.Run("no answer", func(t *testing.T) {
		client := fake.NewClientset()
		stuck := make(chan struct{})
		t.Cleanup(func() { close(stuck) })
		client.PrependReactor("create", "podtemplates", func(clienttesting.Action) (bool, runtime.Object, error) {
			<-stuck // a server, or a client, that never answers and ignores the context
			return true, nil, errors.New("too late")
		})
		start := time.Now()
		errs, err := ValidatePodTemplateWithServer(context.Background(), client, "ns", validTemplate(), fldPath,
			nil, WithWriteTimeout(20*time.Millisecond))
		require.Error(t, err)
		assert.Nil(t, errs)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 10*time.Second)
		assert.True(t, strings.HasPrefix(err.Error(), `validation: dry-run create of a pod template in namespace "ns": no answer within 20ms`), err.Error())
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		client := fake.NewClientset()
		client.PrependReactor("create", "podtemplates", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, context.Canceled
		})
		_, err := ValidatePodTemplateWithServer(ctx, client, "ns", validTemplate(), fldPath)
		assert.ErrorIs(t, err, context.Canceled)
	})

	t.Run("nil template", func(t *testing.T) {
		client := fake.NewClientset()
		errs, err := ValidatePodTemplateWithServer(context.Background(), client, "ns", nil, fldPath)
		require.NoError(t, err)
		assert.Equal(t, summarize(field.ErrorList{field.Required(fldPath, "")}), summarize(errs))
		assert.Empty(t, client.Actions(), "nothing to ask the server")
	})

	t.Run("no namespace", func(t *testing.T) {
		client := fake.NewClientset()
		errs, err := ValidatePodTemplateWithServer(context.Background(), client, "", validTemplate(), fldPath)
		require.EqualError(t, err, "validation: a dry-run create of a pod template needs a namespace")
		assert.Nil(t, errs)
		assert.Empty(t, client.Actions())
	})

	t.Run("nil client", func(t *testing.T) {
		assert.PanicsWithValue(t, "validation: ValidatePodTemplateWithServer: nil client", func() {
			_, _ = ValidatePodTemplateWithServer(context.Background(), nil, "ns", validTemplate(), fldPath)
		})
	})
}

func TestWithWriteTimeout(t *testing.T) {
	assert.PanicsWithValue(t, "validation: WithWriteTimeout: the timeout must be positive, not 0s", func() { WithWriteTimeout(0) })
	assert.Panics(t, func() { WithWriteTimeout(-time.Second) })
	assert.Equal(t, DefaultWriteTimeout, newConfig([]Option{nil}).timeout)
	assert.Equal(t, time.Second, newConfig([]Option{WithWriteTimeout(time.Second)}).timeout)
}
