//go:build race

package partialsort

// raceEnabled shrinks the exhaustive tests under the race detector, which
// slows comparisons tenfold.
const raceEnabled = true
