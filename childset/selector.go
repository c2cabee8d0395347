package childset

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
)

// Reasons of the Warning events the core records.
const (
	// ReasonSelectorInvalid: the owner's selector is malformed, missing or
	// empty; nothing is written.
	ReasonSelectorInvalid = "SelectorInvalid"
	// ReasonSelectorMismatch: the selector does not match the child
	// template's labels; nothing is written.
	ReasonSelectorMismatch = "SelectorMismatch"
	// ReasonTemplateInvalid: the Spec could not build a child for the
	// owner; nothing is written.
	ReasonTemplateInvalid = "TemplateInvalid"
	// ReasonNameConflict: an object the owner does not control holds a
	// name the owner wants; that index is retried later, never duplicated.
	ReasonNameConflict = "NameConflict"
	// ReasonRollingUpdateInvalid: the owner's rolling update is refused
	// (RollingUpdate.Bounds); nothing is created or deleted.
	ReasonRollingUpdateInvalid = "RollingUpdateInvalid"
)

// SpecError is why the core refused an owner's spec before any write.
type SpecError struct {
	// Reason is ReasonSelectorInvalid or ReasonSelectorMismatch.
	Reason string
	// Err says what is wrong.
	Err error
}

func (e *SpecError) Error() string { return e.Err.Error() }

func (e *SpecError) Unwrap() error { return e.Err }

// CheckSelector is the rule every write waits for: the selector (or
// selErr, the error converting it) is valid and not empty, and matches
// templateLabels, the labels of the children the owner creates. An empty
// selector would claim every object of the namespace; one that does not
// match the template would release each child it creates and create it
// again. It returns nil or a *SpecError. This is the rule podset applies to
// pod templates, for children of any kind.
func CheckSelector(selector labels.Selector, selErr error, templateLabels map[string]string) error {
	switch {
	case selErr != nil:
		return &SpecError{Reason: ReasonSelectorInvalid, Err: fmt.Errorf("invalid selector: %w", selErr)}
	case selector == nil:
		return &SpecError{Reason: ReasonSelectorInvalid, Err: errors.New("invalid selector: none")}
	case selector.Empty():
		return &SpecError{Reason: ReasonSelectorInvalid, Err: errors.New("invalid selector: an empty selector would select every object of the namespace")}
	}
	if !selector.Matches(labels.Set(templateLabels)) {
		return &SpecError{Reason: ReasonSelectorMismatch, Err: fmt.Errorf("selector %q does not match the template's labels %q",
			selector.String(), labels.Set(templateLabels).String())}
	}
	return nil
}
