package history

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CloneAndAddLabel returns a copy of labels with key set to value. With an
// empty key it returns labels itself, uncopied, as upstream does.
func CloneAndAddLabel(labels map[string]string, key, value string) map[string]string {
	if key == "" {
		return labels
	}
	out := make(map[string]string, len(labels)+1)
	maps.Copy(out, labels)
	out[key] = value
	return out
}

// CloneAndRemoveLabel returns a copy of labels without key. With an empty
// key it returns labels itself, uncopied.
func CloneAndRemoveLabel(labels map[string]string, key string) map[string]string {
	if key == "" {
		return labels
	}
	out := make(map[string]string, len(labels))
	maps.Copy(out, labels)
	delete(out, key)
	return out
}

// AddLabel sets key to value in labels, allocating the map if it is nil, and
// returns it. With an empty key it returns labels unchanged.
func AddLabel(labels map[string]string, key, value string) map[string]string {
	if key == "" {
		return labels
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	return labels
}

// CloneSelectorAndAddLabel returns a deep copy of selector whose MatchLabels
// also hold key=value; MatchLabels is never nil in the copy. With an empty
// key it returns selector itself. A nil selector is copied as an empty one.
func CloneSelectorAndAddLabel(selector *metav1.LabelSelector, key, value string) *metav1.LabelSelector {
	if key == "" {
		return selector
	}
	out := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	if selector == nil {
		out.MatchLabels[key] = value
		return out
	}
	maps.Copy(out.MatchLabels, selector.MatchLabels)
	out.MatchLabels[key] = value
	if selector.MatchExpressions != nil {
		out.MatchExpressions = make([]metav1.LabelSelectorRequirement, len(selector.MatchExpressions))
		for i, req := range selector.MatchExpressions {
			out.MatchExpressions[i] = metav1.LabelSelectorRequirement{Key: req.Key, Operator: req.Operator, Values: slices.Clone(req.Values)}
		}
	}
	return out
}

// AddLabelToSelector sets key=value in selector's MatchLabels, in place, and
// returns selector. With an empty key, or a nil selector, it changes nothing.
func AddLabelToSelector(selector *metav1.LabelSelector, key, value string) *metav1.LabelSelector {
	if key == "" || selector == nil {
		return selector
	}
	if selector.MatchLabels == nil {
		selector.MatchLabels = map[string]string{}
	}
	selector.MatchLabels[key] = value
	return selector
}

// SelectorHasLabel reports whether selector's MatchLabels has a non-empty
// value for key. A nil selector has none.
func SelectorHasLabel(selector *metav1.LabelSelector, key string) bool {
	return selector != nil && selector.MatchLabels[key] != ""
}
