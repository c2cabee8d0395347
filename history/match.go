package history

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// Match says how FindReplicaSet or FindRevision recognised an object.
type Match int

const (
	// NoMatch: nothing describes the template.
	NoMatch Match = iota
	// MatchedByHash: the object's hash label equals the hash the current
	// libraries compute, and its template is equivalent.
	MatchedByHash
	// MatchedBySemantics: the hash label differs (typically written by a
	// controller built against another Kubernetes minor, whose hash covered
	// other Go fields) but the templates are equivalent. Keep using the
	// object as it is: relabelling it would roll its pods.
	MatchedBySemantics
)

func (m Match) String() string {
	switch m {
	case MatchedByHash:
		return "MatchedByHash"
	case MatchedBySemantics:
		return "MatchedBySemantics"
	default:
		return "NoMatch"
	}
}

// TemplatesEquivalent reports whether a and b describe the same pods:
// apiequality.Semantic.DeepEqual after removing the label ignoreLabel (the
// hash label; "" removes none) from both and clearing the values the API
// server defaults (see clearDefaults for the precise list). Neither argument
// is modified. Two nil templates are equivalent; nil and non-nil are not.
func TemplatesEquivalent(a, b *v1.PodTemplateSpec, ignoreLabel string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return semanticEqual(normalizedTemplate(a, ignoreLabel), normalizedTemplate(b, ignoreLabel))
}

func normalizedTemplate(t *v1.PodTemplateSpec, ignoreLabel string) *v1.PodTemplateSpec {
	n := t.DeepCopy()
	if ignoreLabel != "" {
		delete(n.Labels, ignoreLabel)
	}
	clearDefaults(&n.Spec)
	return n
}

func semanticEqual(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }

// FindReplicaSet returns the ReplicaSet in sets that runs template, as a
// Deployment-like owner finds its current ReplicaSet. hashLabel is the label
// key that carries the template hash on the ReplicaSet (a Deployment's is
// "pod-template-hash"), and the hash is ComputeHash(template,
// collisionCount).
//
// A ReplicaSet whose hash label equals that hash and whose template is
// equivalent (TemplatesEquivalent, ignoring hashLabel) wins; failing that, any
// ReplicaSet with an equivalent template does, whatever its hash label says.
// A hash match whose template differs is a hash collision and never matches.
// Among several candidates of the same kind the oldest wins
// (CompareByCreationTimestamp), as upstream's Deployment controller picks.
// sets is not reordered; nil entries are skipped.
func FindReplicaSet(sets []*appsv1.ReplicaSet, template *v1.PodTemplateSpec, hashLabel string, collisionCount *int32) (*appsv1.ReplicaSet, Match) {
	if template == nil {
		return nil, NoMatch
	}
	hash := ComputeHash(template, collisionCount)
	want := normalizedTemplate(template, hashLabel)
	var byHash, bySemantics *appsv1.ReplicaSet
	for _, rs := range sets {
		if rs == nil || !semanticEqual(normalizedTemplate(&rs.Spec.Template, hashLabel), want) {
			continue
		}
		if rs.Labels[hashLabel] == hash {
			if byHash == nil || CompareByCreationTimestamp(rs, byHash) < 0 {
				byHash = rs
			}
		} else if bySemantics == nil || CompareByCreationTimestamp(rs, bySemantics) < 0 {
			bySemantics = rs
		}
	}
	switch {
	case byHash != nil:
		return byHash, MatchedByHash
	case bySemantics != nil:
		return bySemantics, MatchedBySemantics
	default:
		return nil, NoMatch
	}
}

// FindRevision returns the revision in revisions that records the same
// template as needle. A revision with needle's ControllerRevisionHashLabel
// value and EqualRevision data wins (MatchedByHash). Failing that, one whose
// data is EqualRevision or, when templateOf is not nil, whose decoded template
// is TemplatesEquivalent to needle's (ignoring ignoreLabel, typically the
// controller-revision-hash label of the pods) matches MatchedBySemantics.
// Among candidates of the same kind the latest in SortControllerRevisions
// order wins, as upstream's StatefulSet and DaemonSet controllers pick the
// last equal revision. A revision templateOf can't decode is skipped; an
// error decoding needle is returned.
func FindRevision(revisions []*appsv1.ControllerRevision, needle *appsv1.ControllerRevision,
	templateOf func(*appsv1.ControllerRevision) (*v1.PodTemplateSpec, error), ignoreLabel string) (*appsv1.ControllerRevision, Match, error) {
	if needle == nil {
		return nil, NoMatch, nil
	}
	var want *v1.PodTemplateSpec
	if templateOf != nil {
		t, err := templateOf(needle)
		if err != nil {
			return nil, NoMatch, err
		}
		if t != nil {
			want = normalizedTemplate(t, ignoreLabel)
		}
	}
	hash, hasHash := needle.Labels[ControllerRevisionHashLabel]
	latest := func(cur, cand *appsv1.ControllerRevision) *appsv1.ControllerRevision {
		if cur == nil || compareRevisions(cand, cur) > 0 {
			return cand
		}
		return cur
	}
	var hashHit, semHit *appsv1.ControllerRevision
	for _, r := range revisions {
		if r == nil {
			continue
		}
		equal := EqualRevision(r, needle)
		if equal && hasHash && r.Labels[ControllerRevisionHashLabel] == hash {
			hashHit = latest(hashHit, r)
			continue
		}
		if !equal && want != nil {
			t, err := templateOf(r)
			equal = err == nil && t != nil && semanticEqual(normalizedTemplate(t, ignoreLabel), want)
		}
		if equal {
			semHit = latest(semHit, r)
		}
	}
	switch {
	case hashHit != nil:
		return hashHit, MatchedByHash, nil
	case semHit != nil:
		return semHit, MatchedBySemantics, nil
	default:
		return nil, NoMatch, nil
	}
}
