package expectations

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Owner keys bind a record to one incarnation of its owner (kubernetes#142142).
// Upstream keys records by namespace/name, so an owner deleted and re-created
// under the same name inherits the unsatisfied record of its predecessor and
// stalls until the TTL runs out. Embedding the UID gives the new incarnation a
// different key: it starts with no record, and the old one expires and is
// evicted. '@' cannot occur in a namespace or an object name, so the split is
// unambiguous.

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
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	if uid == "" {
		return key
	}
	return key + "@" + string(uid)
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
// upstream key and yields an empty uid. Errors wrap ErrInvalidOwnerKey.
func ParseOwnerKey(key string) (namespace, name string, uid types.UID, err error) {
	rest := key
	if i := strings.IndexByte(key, '@'); i >= 0 {
		rest, uid = key[:i], types.UID(key[i+1:])
		if uid == "" {
			return "", "", "", fmt.Errorf("%w %q: empty UID after '@'", ErrInvalidOwnerKey, key)
		}
	}
	switch parts := strings.Split(rest, "/"); len(parts) {
	case 1:
		name = parts[0]
	case 2:
		namespace, name = parts[0], parts[1]
		if namespace == "" {
			return "", "", "", fmt.Errorf("%w %q: empty namespace before '/'", ErrInvalidOwnerKey, key)
		}
	default:
		return "", "", "", fmt.Errorf("%w %q: more than one '/'", ErrInvalidOwnerKey, key)
	}
	if name == "" {
		return "", "", "", fmt.Errorf("%w %q: empty name", ErrInvalidOwnerKey, key)
	}
	return namespace, name, uid, nil
}
