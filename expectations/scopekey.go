package expectations

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Scoped keys split one owner's expectations by scope, for controllers that
// expect several kinds of dependents at once: a training job's workers and
// parameter servers, a set's pods and its services. Each scope is its own
// record, so creations observed for one never satisfy another. The key keeps
// OwnerKey's UID binding (kubernetes#142142): "namespace/name#scope@uid".
// '#' cannot occur in a namespace or an object name, so it marks the scope
// unambiguously, and the UID stays last, after '@', as in OwnerKey.

// OwnerScopeKey returns the expectations key of one scope of an owner:
// "namespace/name#scope@uid", or without "namespace/" for a cluster-scoped
// owner and without "@uid" for an empty uid. scope must be non-empty and must
// not contain '#', '@' or '/'; such a scope (a programmer error, since
// scopes are constants of the controller) returns an error.
func OwnerScopeKey(namespace, name string, uid types.UID, scope string) (string, error) {
	if scope == "" || strings.ContainsAny(scope, "#@/") {
		return "", fmt.Errorf("%w: scope %q must be non-empty and free of '#', '@' and '/'", ErrInvalidOwnerKey, scope)
	}
	key := name + "#" + scope
	if namespace != "" {
		key = namespace + "/" + key
	}
	if uid != "" {
		key += "@" + string(uid)
	}
	return key, nil
}

// OwnerScopeKeyFor returns OwnerScopeKey for obj's namespace, name and UID.
func OwnerScopeKeyFor(obj metav1.Object, scope string) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("%w: nil owner", ErrInvalidOwnerKey)
	}
	return OwnerScopeKey(obj.GetNamespace(), obj.GetName(), obj.GetUID(), scope)
}

// OwnerScopeKeyForRef returns the key of one scope of the owner a
// controllerRef points at; the namespace is the dependent's. Dependent event
// handlers use it with the scope they read from the dependent (a replica-type
// label, say).
func OwnerScopeKeyForRef(namespace string, ref *metav1.OwnerReference, scope string) (string, error) {
	if ref == nil {
		return "", fmt.Errorf("%w: nil controller reference", ErrInvalidOwnerKey)
	}
	return OwnerScopeKey(namespace, ref.Name, ref.UID, scope)
}

// ParseOwnerScopeKey splits a key made by OwnerScopeKey. Errors wrap
// ErrInvalidOwnerKey; a key without a scope (an OwnerKey) is one of them.
func ParseOwnerScopeKey(key string) (namespace, name string, uid types.UID, scope string, err error) {
	namespace, scoped, uid, err := ParseOwnerKey(key)
	if err != nil {
		return "", "", "", "", err
	}
	i := strings.IndexByte(scoped, '#')
	if i < 0 {
		return "", "", "", "", fmt.Errorf("%w %q: no '#scope'", ErrInvalidOwnerKey, key)
	}
	name, scope = scoped[:i], scoped[i+1:]
	if name == "" || scope == "" || strings.ContainsRune(scope, '#') {
		return "", "", "", "", fmt.Errorf("%w %q: empty name or malformed scope", ErrInvalidOwnerKey, key)
	}
	return namespace, name, uid, scope, nil
}
