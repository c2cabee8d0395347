package podranking

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// ZoneSpread returns a Ranker that spreads deletions across topology domains
// so a scale-down does not empty one zone first (kubernetes#124149). Upstream
// only counts pods per node, so with pods on many nodes it happily deletes
// every pod of one zone.
//
// zoneOf maps a node name to its domain, typically from the node's
// topology.kubernetes.io/zone label in an informer cache. Within each domain
// the pods are ordered by the rules that follow this ranker; the pod at
// position p of a domain holding n pods scores -(n-p), so each successive
// deletion comes from the domain that currently has the most pods, and equal
// domains fall through to the later rules. Put it in front of the built-in
// rules with WithRankersFirst.
//
// Pods not assigned to a node score lowest, so they still go first: they hold
// no place in any domain. Pods on nodes for which zoneOf returns "" share one
// domain. A nil zoneOf puts every assigned pod in that one domain, which
// leaves the order unchanged; nil pods score highest.
func ZoneSpread(zoneOf func(nodeName string) string) Ranker {
	return zoneSpread{zoneOf: zoneOf}
}

type zoneSpread struct {
	zoneOf func(string) string
}

func (zoneSpread) Name() string { return "zone-spread" }

func (z zoneSpread) Score(pods []*v1.Pod, scores []int64, then func(i, j int) int) {
	domains := make(map[string][]int)
	var names []string
	for i, p := range pods {
		switch {
		case p == nil:
			scores[i] = math.MaxInt64
			continue
		case p.Spec.NodeName == "":
			scores[i] = math.MinInt64
			continue
		}
		zone := ""
		if z.zoneOf != nil {
			zone = z.zoneOf(p.Spec.NodeName)
		}
		if _, ok := domains[zone]; !ok {
			names = append(names, zone)
		}
		domains[zone] = append(domains[zone], i)
	}
	for _, name := range names {
		members := domains[name]
		slices.SortStableFunc(members, then)
		n := len(members)
		for pos, i := range members {
			scores[i] = -int64(n - pos)
		}
	}
}
