package podranking

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDeletionCost(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    int32
		wantErr bool
	}{
		{"nil map", nil, 0, false},
		{"absent", map[string]string{"other": "5"}, 0, false},
		{"zero", map[string]string{DeletionCostAnnotation: "0"}, 0, false},
		{"positive", map[string]string{DeletionCostAnnotation: "100"}, 100, false},
		{"negative", map[string]string{DeletionCostAnnotation: "-100"}, -100, false},
		{"max int32", map[string]string{DeletionCostAnnotation: "2147483647"}, 2147483647, false},
		{"min int32", map[string]string{DeletionCostAnnotation: "-2147483648"}, -2147483648, false},
		{"minus zero is allowed", map[string]string{DeletionCostAnnotation: "-0"}, 0, false},
		{"minus leading zero is allowed", map[string]string{DeletionCostAnnotation: "-08"}, -8, false},
		{"empty", map[string]string{DeletionCostAnnotation: ""}, 0, true},
		{"plus sign", map[string]string{DeletionCostAnnotation: "+10"}, 0, true},
		{"leading zero", map[string]string{DeletionCostAnnotation: "008"}, 0, true},
		{"leading space", map[string]string{DeletionCostAnnotation: " 5"}, 0, true},
		{"trailing junk", map[string]string{DeletionCostAnnotation: "10Mi"}, 0, true},
		{"lone minus", map[string]string{DeletionCostAnnotation: "-"}, 0, true},
		{"overflow", map[string]string{DeletionCostAnnotation: "2147483648"}, 0, true},
		{"underflow", map[string]string{DeletionCostAnnotation: "-2147483649"}, 0, true},
		{"huge", map[string]string{DeletionCostAnnotation: "99999999999999999999999"}, 0, true},
		{"underscore", map[string]string{DeletionCostAnnotation: "1_000"}, 0, true},
		{"float", map[string]string{DeletionCostAnnotation: "1.5"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DeletionCost(tt.ann)
			assert.Equal(t, tt.want, got)
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrInvalidDeletionCost)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// FuzzDeletionCost checks the allocation-free parser against the reference
// rules: the first-character check followed by strconv.ParseInt(v, 10, 32).
func FuzzDeletionCost(f *testing.F) {
	for _, s := range []string{"", "0", "-0", "-08", "008", "+10", " 5", "10Mi", "-", "2147483647", "2147483648",
		"-2147483648", "-2147483649", "1_0", "٣", "1\x00", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ann := map[string]string{DeletionCostAnnotation: v}
		got, err := DeletionCost(ann)
		want, wantErr := refCost(ann)
		if (err != nil) != (wantErr != nil) || got != want {
			t.Fatalf("DeletionCost(%q) = %d, %v; reference %d, %v", v, got, err, want, wantErr)
		}
		if err != nil && !errors.Is(err, ErrInvalidDeletionCost) {
			t.Fatalf("error %v does not wrap ErrInvalidDeletionCost", err)
		}
	})
}
