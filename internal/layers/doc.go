// Package layers holds no code: its test checks the library's import
// graph against the layering CONTRIBUTING.md writes down, so that no
// import runs back up. A new package must be given its place there and in
// the test's table.
package layers
