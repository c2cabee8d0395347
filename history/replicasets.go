package history

import (
	"cmp"

	appsv1 "k8s.io/api/apps/v1"
)

// FilterActiveReplicaSets returns the ReplicaSets that want at least one
// replica, in their order. nil entries are dropped; a nil spec.replicas
// counts as 1, the API server's default.
func FilterActiveReplicaSets(replicaSets []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	return FilterReplicaSets(replicaSets, func(rs *appsv1.ReplicaSet) bool {
		return rs != nil && specReplicas(rs) > 0
	})
}

// FilterReplicaSets returns the ReplicaSets for which keep is true, in their
// order; nil when there are none.
func FilterReplicaSets(replicaSets []*appsv1.ReplicaSet, keep func(*appsv1.ReplicaSet) bool) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range replicaSets {
		if keep(rs) {
			out = append(out, rs)
		}
	}
	return out
}

// specReplicas reads spec.replicas, taking nil as the API server's default 1.
func specReplicas(rs *appsv1.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

// ReplicaSetsByCreationTimestamp orders ReplicaSets oldest first, by name
// among equal creation times; nil entries go last. Use it with sort.Sort or
// through CompareByCreationTimestamp with slices.SortFunc.
type ReplicaSetsByCreationTimestamp []*appsv1.ReplicaSet

func (o ReplicaSetsByCreationTimestamp) Len() int      { return len(o) }
func (o ReplicaSetsByCreationTimestamp) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ReplicaSetsByCreationTimestamp) Less(i, j int) bool {
	return CompareByCreationTimestamp(o[i], o[j]) < 0
}

// ReplicaSetsBySizeOlder orders ReplicaSets by spec.replicas, largest first,
// then oldest first, then by name; nil entries go last.
type ReplicaSetsBySizeOlder []*appsv1.ReplicaSet

func (o ReplicaSetsBySizeOlder) Len() int      { return len(o) }
func (o ReplicaSetsBySizeOlder) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ReplicaSetsBySizeOlder) Less(i, j int) bool {
	return CompareBySizeOlder(o[i], o[j]) < 0
}

// ReplicaSetsBySizeNewer orders ReplicaSets by spec.replicas, largest first,
// then newest first, then by name in reverse; nil entries go last.
type ReplicaSetsBySizeNewer []*appsv1.ReplicaSet

func (o ReplicaSetsBySizeNewer) Len() int      { return len(o) }
func (o ReplicaSetsBySizeNewer) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o ReplicaSetsBySizeNewer) Less(i, j int) bool {
	return CompareBySizeNewer(o[i], o[j]) < 0
}

// CompareByCreationTimestamp is ReplicaSetsByCreationTimestamp's order as a
// comparison function for slices.SortFunc.
func CompareByCreationTimestamp(a, b *appsv1.ReplicaSet) int {
	if a == nil || b == nil {
		return compareNil(a == nil, b == nil)
	}
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// CompareBySizeOlder is ReplicaSetsBySizeOlder's order as a comparison
// function for slices.SortFunc.
func CompareBySizeOlder(a, b *appsv1.ReplicaSet) int {
	if a == nil || b == nil {
		return compareNil(a == nil, b == nil)
	}
	if c := cmp.Compare(specReplicas(b), specReplicas(a)); c != 0 {
		return c
	}
	return CompareByCreationTimestamp(a, b)
}

// CompareBySizeNewer is ReplicaSetsBySizeNewer's order as a comparison
// function for slices.SortFunc.
func CompareBySizeNewer(a, b *appsv1.ReplicaSet) int {
	if a == nil || b == nil {
		return compareNil(a == nil, b == nil)
	}
	if c := cmp.Compare(specReplicas(b), specReplicas(a)); c != 0 {
		return c
	}
	return CompareByCreationTimestamp(b, a)
}
