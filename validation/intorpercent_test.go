package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Upstream's messages, word for word (pkg/apis/apps/validation and the
// apimachinery helpers it calls).
const (
	percentMsg     = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
	negativeMsg    = "must be greater than or equal to 0"
	intOrPctMsg    = "must be an integer or percentage (e.g '5%%')"
	over100Msg     = "must not be greater than 100%"
	selectorMsg    = "`selector` does not match template `labels`"
	rsDeadlineMsg  = "activeDeadlineSeconds in ReplicaSet is not Supported"
	alwaysOnlyText = `supported values: "Always"`
)

func TestValidatePositiveIntOrPercent(t *testing.T) {
	p := field.NewPath("spec", "strategy", "rollingUpdate", "maxSurge")
	bogus := intstr.IntOrString{Type: 2}
	for _, tt := range []struct {
		name string
		in   intstr.IntOrString
		want field.ErrorList
	}{
		{"int", intstr.FromInt32(5), nil},
		{"zero", intstr.FromInt32(0), nil},
		{"negative int", intstr.FromInt32(-1), field.ErrorList{field.Invalid(p, int64(-1), negativeMsg)}},
		{"percent", intstr.FromString("20%"), nil},
		{"zero percent", intstr.FromString("0%"), nil},
		{"over 100 percent is IsNotMoreThan100Percent's to refuse", intstr.FromString("120%"), nil},
		{"words", intstr.FromString("20Percent"), field.ErrorList{field.Invalid(p, intstr.FromString("20Percent"), percentMsg)}},
		{"negative percent", intstr.FromString("-5%"), field.ErrorList{field.Invalid(p, intstr.FromString("-5%"), percentMsg)}},
		{"digits only", intstr.FromString("5"), field.ErrorList{field.Invalid(p, intstr.FromString("5"), percentMsg)}},
		{"empty string", intstr.FromString(""), field.ErrorList{field.Invalid(p, intstr.FromString(""), percentMsg)}},
		{"unknown type", bogus, field.ErrorList{field.Invalid(p, bogus, intOrPctMsg)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidatePositiveIntOrPercent(tt.in, p)
			assert.Equal(t, summarize(tt.want), summarize(got))
			for _, e := range got {
				assert.NotPanics(t, func() { _ = e.Error() })
			}
		})
	}
}

func TestIsNotMoreThan100Percent(t *testing.T) {
	p := field.NewPath("spec", "strategy", "rollingUpdate", "maxUnavailable")
	for _, tt := range []struct {
		name string
		in   intstr.IntOrString
		want field.ErrorList
	}{
		{"110%", intstr.FromString("110%"), field.ErrorList{field.Invalid(p, intstr.FromString("110%"), over100Msg)}},
		{"101%", intstr.FromString("101%"), field.ErrorList{field.Invalid(p, intstr.FromString("101%"), over100Msg)}},
		{"100%", intstr.FromString("100%"), nil},
		{"0%", intstr.FromString("0%"), nil},
		{"an integer is no percentage", intstr.FromInt32(200), nil},
		{"not a percentage", intstr.FromString("abc"), nil},
		{"negative is not a valid percentage", intstr.FromString("-110%"), nil},
		{"beyond int", intstr.FromString("99999999999999999999%"),
			field.ErrorList{field.Invalid(p, intstr.FromString("99999999999999999999%"), over100Msg)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, summarize(tt.want), summarize(IsNotMoreThan100Percent(tt.in, p)))
		})
	}
	assert.Equal(t, `spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "110%": must not be greater than 100%`,
		IsNotMoreThan100Percent(intstr.FromString("110%"), p)[0].Error())
}
