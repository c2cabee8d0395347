package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// Each member of a ring keeps one Lease, named LeaseName(ring, identity),
// labelled RingLabel=ring, with its identity as holderIdentity and the
// ranges it claims in ClaimsAnnotation.
const (
	RingLabel        = "shard.ctrlkit.io/ring"
	ClaimsAnnotation = "shard.ctrlkit.io/claims"
)

// LeaseName is the name of the Lease of a member of a ring.
func LeaseName(ring, identity string) string { return ring + "-" + identity }

// errLeaseLost is returned when a member's Lease was changed or deleted by
// someone else: the member can no longer tell what others think it holds.
var errLeaseLost = errors.New("shard: own Lease changed or deleted by another writer")

// peer is a member as its Lease shows it.
type peer struct {
	identity string
	claims   Ranges
	duration time.Duration // leaseDurationSeconds, capped by maxPeerDuration
}

// maxPeerDuration caps the duration a Lease may ask for: ten of this
// member's durations, and at least five minutes. Members of a ring are meant
// to use one duration; the cap leaves room for a rolling change of it, while
// a hand-edited or corrupt leaseDurationSeconds (up to 68 years) blocks the
// ranges it claims for minutes, not years. A member configured above the
// cap of its peers is read as holding for the cap only, so it could be taken
// over while it still trusts its Lease: keep durations within a factor of
// ten.
func maxPeerDuration(own time.Duration) time.Duration {
	return max(10*own, 5*time.Minute)
}

// readPeer reads a Lease of the ring. A Lease without a holder identity, a
// renewTime or a positive leaseDurationSeconds was never renewed by a member
// and is ignored. Claims that don't parse are read as the whole space: an
// unknown claim must block others until the Lease expires, never free a
// range. Whether the Lease is fresh is for observe to say: renewTime is
// another clock's reading.
func (m *Member) readPeer(l *coordinationv1.Lease) (peer, bool) {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" ||
		l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds <= 0 {
		return peer{}, false
	}
	duration := min(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second, maxPeerDuration(m.cfg.leaseDuration))
	claims, err := ParseRanges(l.Annotations[ClaimsAnnotation])
	if err != nil {
		m.cfg.logger.Error(err, "Unreadable claims, taken as the whole space", "lease", l.Name)
		claims = FullRanges()
	}
	return peer{identity: *l.Spec.HolderIdentity, claims: claims, duration: duration}, true
}

// leaseStore reads and writes the Leases of one member's ring; only the
// goroutine of Run uses it.
type leaseStore struct {
	leases               coordinationv1client.LeaseInterface
	ring, identity, name string
	durationSeconds      int32
	writeTimeout         time.Duration
	current              *coordinationv1.Lease // own Lease as last written or read
	unanswered           *coordinationv1.Lease // the last write that failed: stored or not, nobody knows
	selector             string
}

func validateNames(ring, identity string) error {
	if errs := validation.IsValidLabelValue(ring); ring == "" || len(errs) > 0 {
		return fmt.Errorf("shard: ring name %q is not a label value: %v", ring, errs)
	}
	if identity == "" {
		return errors.New("shard: empty identity")
	}
	if errs := validation.IsDNS1123Subdomain(LeaseName(ring, identity)); len(errs) > 0 {
		return fmt.Errorf("shard: Lease name %q: %v", LeaseName(ring, identity), errs)
	}
	return nil
}

// get reads the member's own Lease; nil without error when there is none.
func (s *leaseStore) get(ctx context.Context) (*coordinationv1.Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout)
	defer cancel()
	l, err := s.leases.Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("shard: get Lease %s: %w", s.name, err)
	}
	s.current = l
	return l, nil
}

// renew writes the member's Lease with renewTime stamp and the given claims,
// creating it if there is none yet. A conflict or a missing Lease after the
// first write means another writer, errLeaseLost, unless the Lease holds
// exactly the last write of ours that failed: that write was stored after
// all (its answer timed out, or the connection broke), and renew goes on
// from it.
func (s *leaseStore) renew(ctx context.Context, claims Ranges, stamp metav1.MicroTime) error {
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout)
	defer cancel()
	err := s.write(ctx, claims, stamp)
	if !errors.Is(err, errLeaseLost) || !s.adoptUnanswered(ctx) {
		return err
	}
	return s.write(ctx, claims, stamp)
}

// write is one create or update of the member's Lease.
func (s *leaseStore) write(ctx context.Context, claims Ranges, stamp metav1.MicroTime) error {
	if s.current == nil {
		l := s.desired(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: s.name}}, claims, stamp)
		l.Spec.AcquireTime = &stamp
		created, err := s.leases.Create(ctx, l, metav1.CreateOptions{})
		if err != nil {
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%w: %w", errLeaseLost, err)
			}
			s.unanswered = l
			return fmt.Errorf("shard: create Lease %s: %w", s.name, err)
		}
		s.current, s.unanswered = created, nil
		return nil
	}
	l := s.desired(s.current.DeepCopy(), claims, stamp)
	updated, err := s.leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			s.current = nil
			return fmt.Errorf("%w: %w", errLeaseLost, err)
		}
		s.unanswered = l
		return fmt.Errorf("shard: renew Lease %s: %w", s.name, err)
	}
	s.current, s.unanswered = updated, nil
	return nil
}

// adoptUnanswered reads the Lease after a conflict and reports whether it is
// the last write of ours that failed, stored all the same; it is then the
// Lease renew goes on from. Holder, renewTime to the microsecond and claims
// all equal is a write of this incarnation: nobody else writes our identity
// with our stamp.
func (s *leaseStore) adoptUnanswered(ctx context.Context) bool {
	sent := s.unanswered
	s.unanswered = nil
	if sent == nil {
		return false
	}
	l, err := s.leases.Get(ctx, s.name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	same := l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == s.identity &&
		l.Spec.RenewTime != nil && sent.Spec.RenewTime != nil && l.Spec.RenewTime.Equal(sent.Spec.RenewTime) &&
		l.Annotations[ClaimsAnnotation] == sent.Annotations[ClaimsAnnotation]
	if !same {
		return false
	}
	s.current = l
	return true
}

func (s *leaseStore) desired(l *coordinationv1.Lease, claims Ranges, stamp metav1.MicroTime) *coordinationv1.Lease {
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[RingLabel] = s.ring
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[ClaimsAnnotation] = claims.String()
	identity, seconds := s.identity, s.durationSeconds
	l.Spec.HolderIdentity = &identity
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.RenewTime = &stamp
	return l
}

// list reads every Lease of the ring. It reads from etcd (no resourceVersion),
// never from a cache: the hand-over relies on seeing every claim written
// before the list started.
func (s *leaseStore) list(ctx context.Context) ([]coordinationv1.Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout)
	defer cancel()
	list, err := s.leases.List(ctx, metav1.ListOptions{LabelSelector: s.selector})
	if err != nil {
		return nil, fmt.Errorf("shard: list Leases of ring %s: %w", s.ring, err)
	}
	return list.Items, nil
}

// remove deletes the member's Lease, but only the incarnation it wrote last.
func (s *leaseStore) remove(ctx context.Context) error {
	if s.current == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout)
	defer cancel()
	err := s.deleteCurrent(ctx)
	// A renewal cancelled as the member stopped may have been stored all
	// the same, and moved the version the delete is conditional on.
	if apierrors.IsConflict(err) && s.adoptUnanswered(ctx) {
		err = s.deleteCurrent(ctx)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("shard: delete Lease %s: %w", s.name, err)
	}
	s.current = nil
	return nil
}

// deleteCurrent deletes the Lease if it is still the version last written.
func (s *leaseStore) deleteCurrent(ctx context.Context) error {
	uid, rv := s.current.UID, s.current.ResourceVersion
	pre := metav1.Preconditions{}
	if uid != "" {
		pre.UID = &uid
	}
	if rv != "" {
		pre.ResourceVersion = &rv
	}
	return s.leases.Delete(ctx, s.name, metav1.DeleteOptions{Preconditions: &pre})
}

func ringSelector(ring string) string {
	return labels.Set{RingLabel: ring}.String()
}
