// Package importers checks that importing ctrlkit never moves an
// importer's Kubernetes libraries or controller-runtime: Go's minimum
// version selection raises a dependency to the highest version any module
// in the graph requires, so ctrlkit's go.mod files must require no more
// than the oldest release they support. The programs under testdata stand
// for such importers; the test builds each with and without its ctrlkit
// imports and compares the versions the go command selects.
package importers
