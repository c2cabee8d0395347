package objectcontrol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestOutcomeUnknown(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	withCode := func(code int32, reason metav1.StatusReason) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason}}
	}
	sent := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://apiserver/api/v1/namespaces/ns/pods", Err: err}
	}
	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"nil", nil, false},
		{"504 Timeout", apierrors.NewTimeoutError("etcd was slow", 0), true},
		{"ServerTimeout", apierrors.NewServerTimeout(pods, "create", 2), true},
		{"500 InternalError", apierrors.NewInternalError(errors.New("etcd")), true},
		{"503", apierrors.NewServiceUnavailable("later"), true},
		{"unknown reason 502", withCode(502, ""), true},
		{"unknown reason 408", withCode(408, ""), true},
		{"client deadline", sent(context.DeadlineExceeded), true},
		{"wrapped client deadline", fmt.Errorf("creating: %w", context.DeadlineExceeded), true},
		{"cancelled", sent(context.Canceled), true},
		{"EOF", sent(io.EOF), true},
		{"unexpected EOF", sent(io.ErrUnexpectedEOF), true},
		{"connection reset", sent(&net.OpError{Op: "read", Err: syscall.ECONNRESET}), true},
		{"GOAWAY", sent(errors.New("http2: server sent GOAWAY and closed the connection")), true},
		{"plain error", errors.New("something"), true},
		{"not sent", fmt.Errorf("%w: controllerRef is nil", ErrNotSent), false},
		{"AlreadyExists", apierrors.NewAlreadyExists(pods, "p"), false},
		{"Conflict", apierrors.NewConflict(pods, "p", errors.New("x")), false},
		{"NotFound", apierrors.NewNotFound(pods, "p"), false},
		{"Forbidden", apierrors.NewForbidden(pods, "p", errors.New("quota")), false},
		{"Unauthorized", apierrors.NewUnauthorized("who"), false},
		{"BadRequest", apierrors.NewBadRequest("no"), false},
		{"Invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", nil), false},
		{"MethodNotSupported", apierrors.NewMethodNotSupported(pods, "create"), false},
		{"UnsupportedMediaType", withCode(415, metav1.StatusReasonUnsupportedMediaType), false},
		{"RequestEntityTooLarge", apierrors.NewRequestEntityTooLargeError("big"), false},
		{"TooManyRequests", apierrors.NewTooManyRequests("slow down", 1), false},
		{"Gone", apierrors.NewResourceExpired("old"), false},
		{"unknown reason 422", withCode(422, ""), false},
		{"wrapped Forbidden", fmt.Errorf("creating: %w", apierrors.NewForbidden(pods, "p", errors.New("quota"))), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.unknown, OutcomeUnknown(tc.err))
		})
	}
}

func TestControlMarksRefusedWritesNotSent(t *testing.T) {
	c := New[*metav1.PartialObjectMetadata]("thing", nopWriter{}, nil, "")
	_, err := c.Create(context.Background(), "ns", &metav1.PartialObjectMetadata{}, nil, &metav1.OwnerReference{})
	assert.ErrorIs(t, err, ErrNotSent)
	assert.False(t, OutcomeUnknown(err))
	err = c.Delete(context.Background(), "ns", "x", nil)
	assert.ErrorIs(t, err, ErrNotSent)
}

func ExampleOutcomeUnknown() {
	err := apierrors.NewTimeoutError("request did not complete within 34s", 0)
	fmt.Println(OutcomeUnknown(err))
	fmt.Println(OutcomeUnknown(apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("exceeded quota"))))
	// Output:
	// true
	// false
}

// nopWriter answers every write with success, writing nothing.
type nopWriter struct{}

func (nopWriter) Create(_ context.Context, _ string, obj *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	return obj, nil
}
func (nopWriter) Delete(context.Context, string, string) error { return nil }
func (nopWriter) Patch(_ context.Context, _, _ string, _ types.PatchType, _ []byte) (*metav1.PartialObjectMetadata, error) {
	return nil, nil
}
