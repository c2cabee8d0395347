package consistency

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrStaleCache is matched (errors.Is) by every *StaleCacheError.
var ErrStaleCache = errors.New("consistency: informer cache is older than the controller's own write")

// IsStaleCache reports whether err says only that an informer store is
// behind the controller's own writes (errors.Is(err, ErrStaleCache)): the
// owner waits for its caches, and the sync has not failed.
func IsStaleCache(err error) bool { return errors.Is(err, ErrStaleCache) }

// StaleCacheError is returned by EnsureReady while an informer store has not
// yet applied a resource version the controller wrote for the owner.
type StaleCacheError struct {
	// OwnerKey is the key EnsureReady was called with.
	OwnerKey string
	// GroupResource is the resource whose store is behind.
	GroupResource schema.GroupResource
	// WroteRV is the newest resource version written for the owner; ReadRV
	// is the newest one the store has applied.
	WroteRV, ReadRV string
}

func (e *StaleCacheError) Error() string {
	return fmt.Sprintf("consistency: %s cache for owner %q is at resource version %s, behind the write at %s",
		e.GroupResource, e.OwnerKey, e.ReadRV, e.WroteRV)
}

// Is makes errors.Is(err, ErrStaleCache) true.
func (e *StaleCacheError) Is(target error) bool { return target == ErrStaleCache }
