package ownerkey

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJoinParseRoundTrip(t *testing.T) {
	for _, tc := range []struct{ ns, name, uid, key string }{
		{"ns", "rs", "uid-1", "ns/rs@uid-1"},
		{"", "node-owner", "u", "node-owner@u"},
		{"ns", "rs", "", "ns/rs"},
		{"", "rs", "", "rs"},
		{"ns", "job#worker", "u", "ns/job#worker@u"},
	} {
		assert.Equal(t, tc.key, Join(tc.ns, tc.name, tc.uid))
		ns, name, uid, err := Parse(tc.key)
		assert.NoError(t, err, tc.key)
		assert.Equal(t, []string{tc.ns, tc.name, tc.uid}, []string{ns, name, uid}, tc.key)
	}
}

func TestParseRefuses(t *testing.T) {
	for key, want := range map[string]error{
		"ns/rs@":             ErrEmptyUID,
		"ns/rs@uid-1/worker": ErrBadUID,
		"ns/rs@uid@x":        ErrBadUID,
		"ns/rs@uid#worker":   ErrBadUID,
		"/rs@u":              ErrEmptyNamespace,
		"a/b/c":              ErrManySlashes,
		"ns/":                ErrEmptyName,
		"":                   ErrEmptyName,
		"@u":                 ErrEmptyName,
	} {
		_, _, _, err := Parse(key)
		assert.ErrorIs(t, err, want, key)
	}
}

func TestSplit(t *testing.T) {
	name, uid := Split("ns/rs@u")
	assert.Equal(t, "ns/rs", name)
	assert.Equal(t, "u", uid)
	name, uid = Split("ns/rs")
	assert.Equal(t, "ns/rs", name)
	assert.Empty(t, uid)
}
