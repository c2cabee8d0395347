package syncloop

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/ctrlkit/ctrlkit/consistency"
)

func TestClassify(t *testing.T) {
	l := &Loop{IsStaleCache: consistency.IsStaleCache}
	stale := &consistency.StaleCacheError{OwnerKey: "ns/a", GroupResource: schema.GroupResource{Resource: "pods"}, WroteRV: "2", ReadRV: "1"}
	refused := &url.Error{Op: "Put", URL: "https://127.0.0.1:6443", Err: &net.OpError{
		Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED},
	}}
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("x"))
	for _, tc := range []struct {
		err  error
		want requeueReason
	}{
		{fmt.Errorf("wrapped: %w", stale), requeueStaleCache},
		{refused, requeueUnreachable},
		{utilerrors.NewAggregate([]error{conflict, refused}), requeueUnreachable},
		{apierrors.NewServiceUnavailable("starting"), requeueUnreachable},
		{apierrors.NewTooManyRequests("slow down", 1), requeueUnreachable},
		{errors.New("boom"), requeueFailure},
		{conflict, requeueFailure},
		{utilerrors.NewAggregate([]error{errors.New("a"), errors.New("b")}), requeueFailure},
	} {
		assert.Equal(t, tc.want, l.classify(tc.err), "%v", tc.err)
	}
}
