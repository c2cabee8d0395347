// Package trainingjob is the worked port from MIGRATING.md ("Worked port: a
// training-operator pod creation"): Kubeflow training-operator's copied
// expectations and pod-control calls in createNewPod and the AddPod handler,
// ported to ctrlkit. port.go holds the code shown there, word for word, so it
// is compiled and its behaviour is tested here and the guide cannot drift
// from the API; a test checks that the two stay identical.
package trainingjob
