package objectcontrol

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrNotSent marks an error a write returned before anything reached the
// API server (a controller reference or an object refused by the control's
// own checks): the write certainly did not happen. Match it with errors.Is.
var ErrNotSent = errors.New("the write was not sent")

// OutcomeUnknown reports whether err, returned by a create or a delete,
// leaves open whether the API server applied the write. It is the one
// classification every create and delete path of ctrlkit (childset in all
// its modes, podset, and their client-go and controller-runtime hosts)
// uses to decide whether the write's expectation stays.
//
// A server may store an object and still fail the request: etcd answered
// late and the server gave up waiting (504 Timeout, or a ServerTimeout),
// a proxy in between timed out, or the connection was reset or hit EOF
// after the request went out. The client's own deadline ending first says
// nothing either. So OutcomeUnknown is true for every error except those
// that prove the write was refused before anything was stored: ErrNotSent,
// and the API server's answers Unauthorized, Forbidden, NotFound,
// AlreadyExists, Conflict, Gone, Invalid, BadRequest, MethodNotAllowed,
// NotAcceptable, RequestEntityTooLarge, UnsupportedMediaType and
// TooManyRequests (any other 4xx except 408 counts too). An InternalError
// (500) is ambiguous, as is 503 and anything without a status: true.
//
// For a create, AlreadyExists proves that this request stored nothing; a
// caller that chose the object's name must still ask whether an earlier
// request of its own stored it. A nil err is false.
func OutcomeUnknown(err error) bool {
	if err == nil || errors.Is(err, ErrNotSent) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		// Connection reset, EOF, GOAWAY, deadlines, cancellations and
		// anything else that is not an answer of the API server.
		return true
	}
	switch status.Status().Reason {
	case metav1.StatusReasonUnauthorized, metav1.StatusReasonForbidden, metav1.StatusReasonNotFound,
		metav1.StatusReasonAlreadyExists, metav1.StatusReasonConflict, metav1.StatusReasonGone,
		metav1.StatusReasonInvalid, metav1.StatusReasonBadRequest, metav1.StatusReasonMethodNotAllowed,
		metav1.StatusReasonNotAcceptable, metav1.StatusReasonRequestEntityTooLarge,
		metav1.StatusReasonUnsupportedMediaType, metav1.StatusReasonTooManyRequests:
		return false
	case metav1.StatusReasonTimeout, metav1.StatusReasonServerTimeout, metav1.StatusReasonInternalError,
		metav1.StatusReasonServiceUnavailable:
		return true
	}
	// A reason this code does not know: the code decides. A 4xx refuses the
	// request before storage, except 408 (the request timed out somewhere).
	code := status.Status().Code
	return code < http.StatusBadRequest || code >= http.StatusInternalServerError || code == http.StatusRequestTimeout
}
