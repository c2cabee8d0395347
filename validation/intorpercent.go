package validation

import (
	"strconv"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePositiveIntOrPercent checks an int-or-percent value the way
// upstream checks a Deployment's maxSurge and maxUnavailable: an integer
// must not be negative, a string must be digits followed by '%'. Zero is
// accepted; callers that refuse it check that themselves, as upstream does.
func ValidatePositiveIntOrPercent(intOrPercent intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	allErrs := field.ErrorList{}
	switch intOrPercent.Type {
	case intstr.String:
		for _, msg := range utilvalidation.IsValidPercent(intOrPercent.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, intOrPercent, msg))
		}
	case intstr.Int:
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(intOrPercent.IntValue()), fldPath)...)
	default:
		// Upstream's message reads "%%" literally: it is not a format
		// string. Kept, so that matching on the message works alike.
		allErrs = append(allErrs, field.Invalid(fldPath, intOrPercent, "must be an integer or percentage (e.g '5%%')"))
	}
	return allErrs
}

// IsNotMoreThan100Percent refuses a percentage above 100%. An integer, or a
// string that is not a valid percentage (ValidatePositiveIntOrPercent
// reports that), passes.
func IsNotMoreThan100Percent(intOrStringValue intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	value, isPercent := percentValue(intOrStringValue)
	if !isPercent || value <= 100 {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, intOrStringValue, "must not be greater than 100%")}
}

// percentValue returns the number of a valid percentage. Digits beyond the
// range of int give the largest int, as strconv.Atoi does with its range
// error, which upstream ignores; so "99999999999999999999%" is more than
// 100%.
func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(utilvalidation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}
