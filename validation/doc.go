// Package validation holds the checks of upstream's
// k8s.io/kubernetes/pkg/apis/apps/validation that workload controllers and
// their webhooks call, with upstream v1.37's field paths and messages,
// without importing k8s.io/kubernetes.
//
// Local checks, on the v1 types, no API server needed:
//   - ValidatePositiveIntOrPercent and IsNotMoreThan100Percent: maxSurge,
//     maxUnavailable and other int-or-percent fields.
//   - ValidatePodTemplateSpecForReplicaSet: what upstream's function checks
//     itself: the template is present, the selector matches the template's
//     labels, restartPolicy is Always and activeDeadlineSeconds is unset.
//   - ValidatePodTemplateSpecForStatefulSet: the template is present, the
//     selector matches its labels, and its labels and annotations are well
//     formed. Upstream checks restartPolicy and activeDeadlineSeconds of a
//     StatefulSet's template in ValidateStatefulSetSpec, not here; so does
//     this package's caller.
//
// Both template functions leave out the one part upstream delegates to
// pkg/apis/core/validation.ValidatePodTemplateSpec: the pod spec itself
// (containers, volumes, probes, resources, security context, ... thousands
// of lines that follow the server's feature gates), the template's labels and
// annotations, and the annotations only pods may carry. That validation lives
// in k8s.io/kubernetes, so a library can't run it faithfully; the API server
// can. ValidatePodTemplateWithServer asks it: it creates a PodTemplate
// holding the template with dryRun=All, so nothing is stored, and turns a
// 422 Invalid answer into field errors under the caller's path. The local
// checks plus the server's answer are upstream's answer; the order of the
// errors differs, and the StatefulSet function's labels and annotations,
// which upstream checks twice, are reported by both.
//
// Upstream validates after API defaulting: give the template as the API
// server stores it. An empty restartPolicy is refused, as upstream would
// refuse it had the server not set it to Always first.
//
// Bad input never panics: a nil selector matches nothing against the labels
// (as an empty one), and a nil template is a Required error.
package validation
