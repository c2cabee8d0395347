//go:build !race

package parity

const raceEnabled = false
