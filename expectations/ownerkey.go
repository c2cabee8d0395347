package expectations

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
)

// Owner keys bind a record to one incarnation of its owner (kubernetes#142142).
// Upstream keys records by namespace/name, so an owner deleted and re-created
// under the same name inherits the unsatisfied record of its predecessor and
// stalls until the TTL runs out. Embedding the UID gives the new incarnation a
// different key: it starts with no record, and the old one expires and is
// evicted. '@' cannot occur in a namespace or an object name, and '/', '@'
// and '#' never occur in a UID, so the split is unambiguous. The consistency
// package reads the same keys (both use internal/ownerkey).

// ErrInvalidOwnerKey is wrapped by ParseOwnerKey's errors.
var ErrInvalidOwnerKey = errors.New("expectations: invalid owner key")

// OwnerKey returns the expectations key of an owner: "namespace/name@uid", or
// "name@uid" for a cluster-scoped owner. With an empty uid it returns
// upstream's plain key, "namespace/name" or "name".
//
// Use the plain namespace/name as the workqueue key and OwnerKey for every
// expectations call. Pod handlers get the UID from the pod's controllerRef,
// so they address the same incarnation the controller set expectations for.
func OwnerKey(namespace, name string, uid types.UID) string {
	return ownerkey.Join(namespace, name, string(uid))
}

// OwnerKeyFor returns OwnerKey for obj's namespace, name and UID.
func OwnerKeyFor(obj metav1.Object) string {
	return OwnerKey(obj.GetNamespace(), obj.GetName(), obj.GetUID())
}

// OwnerKeyForRef returns the key of the owner a controllerRef points at; the
// namespace is the dependent's, since owner references never cross
// namespaces. A nil ref returns "".
func OwnerKeyForRef(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return ""
	}
	return OwnerKey(namespace, ref.Name, ref.UID)
}

// ParseOwnerKey splits a key made by OwnerKey. A key without '@' is a plain
// upstream key and yields an empty uid. Errors wrap ErrInvalidOwnerKey. A UID
// never contains '/', '@' or '#', so a key with one after the '@' is refused:
// it is an owner key with text appended ("ns/job@uid/worker/pods"), which
// would otherwise read as a UID that matches no owner. Build per-scope keys
// with OwnerScopeKey or a Scope instead.
func ParseOwnerKey(key string) (namespace, name string, uid types.UID, err error) {
	namespace, name, u, err := ownerkey.Parse(key)
	if err != nil {
		return "", "", "", fmt.Errorf("%w %q: %w", ErrInvalidOwnerKey, key, err)
	}
	return namespace, name, types.UID(u), nil
}
