package expectations

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/internal/ownerkey"
)

// Scoped keys split one owner's expectations by scope, for controllers that
// expect several kinds of dependents at once: a training job's workers and
// parameter servers, a set's pods and its services. Each scope is its own
// record, so creations observed for one never satisfy another. The key keeps
// OwnerKey's UID binding (kubernetes#142142): "namespace/name#scope@uid".
// '#' cannot occur in a namespace or an object name, so it marks the scope
// unambiguously, and the UID stays last, after '@', as in OwnerKey.

//
// A scope the controller knows at compile time ("worker-pods") is a Scope,
// made once with MustScope, whose key methods cannot fail. A scope read from
// data (a replica-type label, a key of the owner's spec) goes through
// OwnerScopeKey, OwnerScopeKeyFor or OwnerScopeKeyForRef, or NewScope, which
// return an error for a scope that cannot be part of a key.

// Scope is a validated scope name: non-empty and free of '#', '@' and '/'.
// Build it with MustScope (for constants) or NewScope (for data); the zero
// Scope is not valid and its key methods panic.
type Scope struct{ name string }

// NewScope validates name as a scope; the error wraps ErrInvalidOwnerKey.
func NewScope(name string) (Scope, error) {
	if name == "" || strings.ContainsAny(name, "#@/") {
		return Scope{}, fmt.Errorf("%w: scope %q must be non-empty and free of '#', '@' and '/'", ErrInvalidOwnerKey, name)
	}
	return Scope{name: name}, nil
}

// MustScope is NewScope for scopes that are constants of the controller: an
// invalid one is a programmer error and panics, at package initialisation
// when it is assigned to a package-level variable, like regexp.MustCompile.
func MustScope(name string) Scope {
	s, err := NewScope(name)
	if err != nil {
		panic("expectations: MustScope: " + err.Error())
	}
	return s
}

// String returns the scope's name.
func (s Scope) String() string { return s.name }

// Key returns OwnerScopeKey(namespace, name, uid, s), which cannot fail.
func (s Scope) Key(namespace, name string, uid types.UID) string {
	if s.name == "" {
		panic("expectations: zero Scope; build it with MustScope or NewScope")
	}
	return ownerkey.Join(namespace, name+"#"+s.name, string(uid))
}

// KeyFor returns the key of scope s of obj.
func (s Scope) KeyFor(obj metav1.Object) string {
	return s.Key(obj.GetNamespace(), obj.GetName(), obj.GetUID())
}

// KeyForRef returns the key of scope s of the owner a controllerRef points
// at; the namespace is the dependent's. A nil ref returns "", as
// OwnerKeyForRef does: no record has that key.
func (s Scope) KeyForRef(namespace string, ref *metav1.OwnerReference) string {
	if ref == nil {
		return ""
	}
	return s.Key(namespace, ref.Name, ref.UID)
}

// OwnerScopeKey returns the expectations key of one scope of an owner:
// "namespace/name#scope@uid", or without "namespace/" for a cluster-scoped
// owner and without "@uid" for an empty uid. A scope that is empty or
// contains '#', '@' or '/' returns an error wrapping ErrInvalidOwnerKey; for
// a constant scope, use MustScope and Scope.Key instead, which have no error
// to handle.
func OwnerScopeKey(namespace, name string, uid types.UID, scope string) (string, error) {
	s, err := NewScope(scope)
	if err != nil {
		return "", err
	}
	return s.Key(namespace, name, uid), nil
}

// OwnerScopeKeyFor returns OwnerScopeKey for obj's namespace, name and UID.
func OwnerScopeKeyFor(obj metav1.Object, scope string) (string, error) {
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
