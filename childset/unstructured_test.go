package childset_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctrlkit/ctrlkit/childset"
)

func TestNestedReplicas(t *testing.T) {
	spec := func(v any) map[string]any { return map[string]any{"spec": map[string]any{"replicas": v}} }
	for _, tc := range []struct {
		name    string
		obj     map[string]any
		want    int32
		wantErr string
	}{
		{name: "absent", obj: map[string]any{}, want: 1},
		{name: "spec absent", obj: map[string]any{"metadata": map[string]any{}}, want: 1},
		{name: "null", obj: spec(nil), want: 1},
		{name: "int64", obj: spec(int64(3)), want: 3},
		{name: "zero", obj: spec(int64(0)), want: 0},
		{name: "int", obj: spec(7), want: 7},
		{name: "int32", obj: spec(int32(9)), want: 9},
		{name: "whole float", obj: spec(4.0), want: 4},
		{name: "max", obj: spec(int64(math.MaxInt32)), want: math.MaxInt32},
		{name: "negative", obj: spec(int64(-1)), wantErr: "spec.replicas must be between 0 and 2147483647, not -1"},
		{name: "past int32", obj: spec(int64(math.MaxInt32) + 1), wantErr: "spec.replicas must be between 0 and 2147483647, not 2147483648"},
		{name: "fraction", obj: spec(2.5), wantErr: "spec.replicas must be a whole number, not 2.5"},
		{name: "huge float", obj: spec(1e300), wantErr: "spec.replicas must be a whole number"},
		{name: "NaN", obj: spec(math.NaN()), wantErr: "spec.replicas must be a whole number"},
		{name: "string", obj: spec("3"), wantErr: "spec.replicas must be an integer, not string 3"},
		{name: "bool", obj: spec(true), wantErr: "spec.replicas must be an integer, not bool true"},
		{name: "spec not a map", obj: map[string]any{"spec": "x"}, wantErr: "spec.replicas: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := childset.NestedReplicas(tc.obj, 1, "spec", "replicas")
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNestedSelector(t *testing.T) {
	spec := func(v any) map[string]any { return map[string]any{"spec": map[string]any{"selector": v}} }
	for _, tc := range []struct {
		name    string
		obj     map[string]any
		want    string
		wantErr string
	}{
		{name: "labels", obj: spec(map[string]any{"matchLabels": map[string]any{"app": "w"}}), want: "app=w"},
		{name: "expressions", obj: spec(map[string]any{"matchExpressions": []any{
			map[string]any{"key": "tier", "operator": "In", "values": []any{"a", "b"}}}}), want: "tier in (a,b)"},
		{name: "empty is returned for CheckSelector to refuse", obj: spec(map[string]any{}), want: ""},
		{name: "absent", obj: map[string]any{}, wantErr: "spec.selector is missing"},
		{name: "null", obj: spec(nil), wantErr: "spec.selector is missing"},
		{name: "not an object", obj: spec("app=w"), wantErr: "spec.selector must be an object, not string"},
		{name: "bad labels", obj: spec(map[string]any{"matchLabels": "app"}), wantErr: "spec.selector: "},
		{name: "bad operator", obj: spec(map[string]any{"matchExpressions": []any{
			map[string]any{"key": "tier", "operator": "Near"}}}), wantErr: "spec.selector: "},
		{name: "bad value", obj: spec(map[string]any{"matchLabels": map[string]any{"app": "not valid!"}}), wantErr: "spec.selector: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := childset.NestedSelector(tc.obj, "spec", "selector")
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.String())
			if tc.want == "" {
				assert.Error(t, childset.CheckSelector(got, nil, map[string]string{"app": "w"}), "CheckSelector refuses an empty selector")
			}
		})
	}
}
