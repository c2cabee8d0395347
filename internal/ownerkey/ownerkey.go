// Package ownerkey reads and writes the owner keys that expectations and
// consistency share: "namespace/name@uid", "name@uid" for a cluster-scoped
// owner, and upstream's plain "namespace/name" without a UID. A name may
// carry an expectations scope ("name#scope"); this package leaves the scope
// to its caller. '/', '@' and '#' never occur in a namespace, an object
// name or a UID the API server generates, so every split is unambiguous.
package ownerkey

import (
	"errors"
	"strings"

	"k8s.io/client-go/tools/cache"
)

// Join returns the key of an owner; an empty namespace leaves out
// "namespace/", an empty uid leaves out "@uid".
func Join(namespace, name, uid string) string {
	key := cache.NewObjectName(namespace, name).String()
	if uid == "" {
		return key
	}
	return key + "@" + uid
}

// Split separates key at its first '@' into the part that names the owner
// and the UID; a key without '@' has an empty UID. It does not validate, so
// it costs one byte search: the consistency guard calls it on every check.
func Split(key string) (ownerName, uid string) {
	if i := strings.IndexByte(key, '@'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return key, ""
}

// The reasons Parse gives; callers wrap them with their own sentinel.
var (
	ErrEmptyUID       = errors.New("empty UID after '@'")
	ErrBadUID         = errors.New("UID contains '/', '@' or '#'")
	ErrEmptyNamespace = errors.New("empty namespace before '/'")
	ErrManySlashes    = errors.New("more than one '/'")
	ErrEmptyName      = errors.New("empty name")
)

// Parse splits a key made by Join into its parts. The error is one of the
// Err values above and says what is wrong. A UID with a separator in it is
// refused: it is what a key extended by hand ("ns/name@uid/suffix") looks
// like, and reading it as a UID would silently address another record.
func Parse(key string) (namespace, name, uid string, err error) {
	rest, uid := Split(key)
	if len(rest) < len(key) {
		if uid == "" {
			return "", "", "", ErrEmptyUID
		}
		if strings.ContainsAny(uid, "/@#") {
			return "", "", "", ErrBadUID
		}
	}
	namespace, name, found := strings.Cut(rest, "/")
	if !found {
		namespace, name = "", rest
	} else if namespace == "" {
		return "", "", "", ErrEmptyNamespace
	}
	if strings.IndexByte(name, '/') >= 0 {
		return "", "", "", ErrManySlashes
	}
	if name == "" {
		return "", "", "", ErrEmptyName
	}
	return namespace, name, uid, nil
}
