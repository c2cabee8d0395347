package expectations

import "testing"

func BenchmarkTmpSet(b *testing.B) {
	keys := benchKeys(1000)
	c := NewControllerExpectations()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = c.ExpectCreations(keys[i%1000], 1)
	}
}
