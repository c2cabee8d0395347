package shard

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Key names the object field the API server hashes to place an object in a
// shard. The values are the field paths of the shardRange() selector.
type Key string

const (
	// KeyUID shards by metadata.uid: objects spread evenly over the ring.
	KeyUID Key = "object.metadata.uid"
	// KeyNamespace shards by metadata.namespace: a namespace stays whole on
	// one member, at the price of a coarser balance.
	KeyNamespace Key = "object.metadata.namespace"
)

// ErrUnsupportedKey is returned for a Key the API server does not know.
var ErrUnsupportedKey = errors.New("shard: unsupported key")

// Valid reports whether the API server accepts k in a shardRange() term.
func (k Key) Valid() bool { return k == KeyUID || k == KeyNamespace }

// FNV-1a, 64 bits: the hash KEP-5866 fixes for shardRange(), so the ranges a
// member computes on the client select the same objects on the server.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Hash returns the 64-bit FNV-1a hash of s, the value the API server compares
// with the bounds of a shardRange() term. It does not allocate.
func Hash(s string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// HashObject hashes the field of obj that k names, exactly as the API server
// does. A cluster-scoped object hashed by namespace hashes the empty string,
// as on the server. A nil object or an unknown key is an error.
func HashObject(obj metav1.Object, k Key) (uint64, error) {
	if obj == nil {
		return 0, errors.New("shard: HashObject: nil object")
	}
	switch k {
	case KeyUID:
		return Hash(string(obj.GetUID())), nil
	case KeyNamespace:
		return Hash(obj.GetNamespace()), nil
	default:
		return 0, fmt.Errorf("%w %q", ErrUnsupportedKey, string(k))
	}
}

// HashController hashes the UID of obj's controller, so that the children of
// one owner land on the shard that owns the owner when the owners are
// sharded by KeyUID. An object without a controller reference hashes its own
// UID: an orphan is handled by the shard that would own it as an owner. The
// server cannot filter by this hash; informers of children filter on the
// client.
func HashController(obj metav1.Object) (uint64, error) {
	if obj == nil {
		return 0, errors.New("shard: HashController: nil object")
	}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return Hash(string(ref.UID)), nil
	}
	return Hash(string(obj.GetUID())), nil
}
