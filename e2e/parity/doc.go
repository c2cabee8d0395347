// Package parity holds the differential tests and side-by-side benchmarks
// that compare ctrlkit with the code it replaces in k8s.io/kubernetes v1.36.3.
package parity
