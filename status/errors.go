package status

import (
	"errors"
	"fmt"
)

// The helpers never panic on nil input; they wrap one of these sentinels
// instead, so callers can tell bad input (a bug in the caller) from an API
// failure (worth a requeue) with errors.Is.
var (
	// ErrNilObject reports a nil ReplicaSet or ReplicationController, or a
	// client that handed back no object without an error.
	ErrNilObject = errors.New("nil object")
	// ErrNilStatus reports a nil status pointer given to a condition setter.
	ErrNilStatus = errors.New("nil status")
	// ErrNilClient reports a nil typed client given to an update.
	ErrNilClient = errors.New("nil client")
	// ErrNilContext reports a nil context given to an update.
	ErrNilContext = errors.New("nil context")
)

func errNilStatus(fn string) error {
	return fmt.Errorf("status: %s: %w", fn, ErrNilStatus)
}
