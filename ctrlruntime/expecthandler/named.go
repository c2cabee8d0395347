package expecthandler

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ctrlkit/ctrlkit/expectations"
)

// Controllers that name what they create (by index or role) can expect the
// names instead of a count. Counting cannot tell an expected creation from
// an unrelated one (an object a user created with the same controller
// reference, or the same create delivered twice after a relist), and either
// satisfies the owner early; with names, only an expected name counts, and
// only once.

// ExpectCreationsNamed records that Reconcile is about to create objects
// with these names (duplicates collapse) for owner, replacing any earlier
// record. Call it before the first create; the Handler observes each
// creation by name.
func (t *Tracker) ExpectCreationsNamed(owner metav1.Object, names []string) error {
	key := expectations.OwnerKeyFor(owner)
	if err := t.counts.ExpectCreationsNamed(key, names); err != nil {
		return fmt.Errorf("expecting %d named creations for %s: %w", len(names), key, err)
	}
	return nil
}

// CreationFailedNamed drops the expected creation of name, for a named
// create that failed or was skipped: no event will ever report it. A name
// not expected (or already observed) changes nothing.
func (t *Tracker) CreationFailedNamed(owner metav1.Object, name string) {
	t.counts.CreationObservedNamed(expectations.OwnerKeyFor(owner), name)
}
