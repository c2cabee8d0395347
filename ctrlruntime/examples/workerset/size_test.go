package workerset_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// adapter.go is the kind's whole user code, status and rolling updates
// included: it stays within 41 lines, imports and comments counted, and
// doc.go states its size, and its lines of code, as they are.
func TestAdapterStaysShort(t *testing.T) {
	src, err := os.ReadFile("adapter.go")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	code := 0
	for _, line := range lines {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "//") {
			code++
		}
	}
	assert.LessOrEqual(t, len(lines), 41, "adapter.go's lines")
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	assert.Contains(t, string(doc), fmt.Sprintf("is %d lines with its imports and comments (%d lines", len(lines), code))
}
