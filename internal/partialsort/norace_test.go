//go:build !race

package partialsort

const raceEnabled = false
