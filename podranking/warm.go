package podranking

import v1 "k8s.io/api/core/v1"

// A ranking of thousands of pods waits on memory: the fields it reads from
// one pod lie in half a dozen cache lines of the pod and of the objects it
// points to (the node name's bytes, the conditions), and a large set of
// pods is not in the cache. Read one pod at a time, among map lookups and
// key extraction, those lines arrive one or two at a time. The functions
// here read the same lines of a short run of pods in a loop that does
// nothing else, so that the processor has the lines of many pods in flight
// at once; the work that follows then finds them in the cache. A run is
// short enough for its lines to stay there.

// warmRun is how many pods warmPods reads ahead of the work on them.
const warmRun = 32

// warmPods reads the cache lines the ranking of each pod will read: the
// node name and its bytes, the phase, the deletion timestamp and the
// annotations, and every condition's type. It returns a
// value made from what it read, which callers ignore.
//
// It stays out of line so that its loads, whose values nobody uses, are not
// removed.
//
//go:noinline
func warmPods(pods []*v1.Pod) int {
	sum := 0
	for _, p := range pods {
		if p == nil {
			continue
		}
		if n := p.Spec.NodeName; n != "" {
			sum += int(n[0])
		}
		sum += len(p.Status.Phase) + len(p.Annotations)
		if p.DeletionTimestamp != nil {
			sum++
		}
		for i := range p.Status.Conditions {
			sum += len(p.Status.Conditions[i].Type)
		}
	}
	return sum
}

// warmStrings reads the first byte of each string, the line a map lookup by
// the string hashes first. Like warmPods, it stays out of line.
//
//go:noinline
func warmStrings(ss []string) int {
	sum := 0
	for _, s := range ss {
		if s != "" {
			sum += int(s[0])
		}
	}
	return sum
}
