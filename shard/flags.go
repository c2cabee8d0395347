package shard

import (
	"errors"
	"flag"
	"fmt"
	"time"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Values of Flags.By.
const (
	ByUID       = "uid"
	ByNamespace = "namespace"
)

// DefaultSweepInterval is how often a Runner's Work sweeps for owners whose
// status lags their spec, unless told otherwise.
const DefaultSweepInterval = 30 * time.Second

// Flags is the --shard-* flag group of a binary that runs its controller as
// a ring member (NewMember, a Runner). AddFlags binds it; Validate checks it
// before the binary starts anything, with messages that name the flags, and
// NewMember joins the ring it names.
type Flags struct {
	// Ring is the ring's name; empty, the binary runs no ring.
	Ring string
	// By is ByUID or ByNamespace: what spreads the owners over the ring.
	By string
	// Namespace holds the ring's Leases; Identity names this replica.
	Namespace, Identity string
	// The Member's options, and the Work's SweepInterval.
	LeaseDuration, RenewInterval, SafetyMargin, SweepInterval time.Duration
}

// AddFlags binds f to fs, the Leases in namespace and the replica named
// identity by default (a pod's namespace and name, say).
func (f *Flags) AddFlags(fs *flag.FlagSet, namespace, identity string) {
	fs.StringVar(&f.Ring, "shard-ring", "", "join this ring of replicas and manage only the owners in this replica's share of the hash space, instead of electing one leader (excludes --leader-elect)")
	fs.StringVar(&f.By, "shard-by", ByUID, "what spreads owners over the ring: uid (each owner by its UID, its pods follow their controller) or namespace (whole namespaces)")
	fs.StringVar(&f.Namespace, "shard-lease-namespace", namespace, "namespace of the ring's Leases, one per replica")
	fs.StringVar(&f.Identity, "shard-identity", identity, "this replica's unique name in the ring (default: $POD_NAME, else the host name)")
	fs.DurationVar(&f.LeaseDuration, "shard-lease-duration", DefaultLeaseDuration, "how long a replica's share stays its own after its last renewal; whole seconds")
	fs.DurationVar(&f.RenewInterval, "shard-renew-interval", DefaultRenewInterval, "how often a replica renews its Lease and recomputes the shares")
	fs.DurationVar(&f.SafetyMargin, "shard-safety-margin", DefaultSafetyMargin, "how much before its Lease expires a replica stops writing, and how long a range it gave up stays claimed after its last write: covers clock skew between replicas and writes still landing after they were cancelled")
	fs.DurationVar(&f.SweepInterval, "shard-sweep-interval", DefaultSweepInterval, "how often a replica queues every owner of its share whose status lags its spec, a bound on any missed event")
}

// Enabled reports whether a ring is named.
func (f Flags) Enabled() bool { return f.Ring != "" }

// Key is what the owners are hashed by.
func (f Flags) Key() Key {
	if f.By == ByNamespace {
		return KeyNamespace
	}
	return KeyUID
}

// Children is how an owner's children are hashed: with the owner's
// namespace, or by their controller's UID.
func (f Flags) Children() Sharding {
	if f.By == ByNamespace {
		return ByKey(KeyNamespace)
	}
	return ByController()
}

// Validate reports every setting NewMember would refuse, naming the flags.
func (f Flags) Validate() error {
	var errs []error
	if f.By != ByUID && f.By != ByNamespace {
		errs = append(errs, fmt.Errorf("--shard-by must be %s or %s, not %q", ByUID, ByNamespace, f.By))
	}
	if f.Identity == "" || f.Namespace == "" {
		errs = append(errs, errors.New("--shard-ring needs --shard-identity and --shard-lease-namespace"))
	}
	if f.LeaseDuration < time.Second || f.LeaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--shard-lease-duration must be a positive whole number of seconds, not %v", f.LeaseDuration))
	}
	if f.SweepInterval <= 0 {
		errs = append(errs, fmt.Errorf("--shard-sweep-interval must be positive, not %v", f.SweepInterval))
	}
	if f.RenewInterval <= 0 || f.SafetyMargin < 0 || f.trusted() <= 0 {
		errs = append(errs, fmt.Errorf("--shard-renew-interval (%v) plus --shard-safety-margin (%v) must be shorter than --shard-lease-duration (%v): a healthy replica would lose its share between renewals",
			f.RenewInterval, f.SafetyMargin, f.LeaseDuration))
	}
	return errors.Join(errs...)
}

// trusted is how long a renewal may take before the member stops trusting
// its Lease.
func (f Flags) trusted() time.Duration { return f.LeaseDuration - f.SafetyMargin - f.RenewInterval }

// NewMember joins the ring f names with f's durations, and a write timeout
// short enough that a renewal that times out leaves the member trusted
// until the next one. opts come after f's, so they win. Validate f first:
// NewMember panics where its options do.
func (f Flags) NewMember(client coordinationv1client.LeasesGetter, opts ...Option) (*Member, error) {
	m, err := NewMember(client, f.Namespace, f.Ring, f.Identity, append([]Option{
		WithLeaseDuration(f.LeaseDuration), WithRenewInterval(f.RenewInterval), WithSafetyMargin(f.SafetyMargin),
		WithWriteTimeout(min(DefaultWriteTimeout, f.trusted()/2)),
	}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("joining ring %q: %w", f.Ring, err)
	}
	return m, nil
}
