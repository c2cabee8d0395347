//go:build !race

package podranking

const raceEnabled = false
