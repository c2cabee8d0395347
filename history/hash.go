package history

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/rand"
)

// maxRevisionPrefix keeps ControllerRevisionName within the 253 bytes of a
// DNS subdomain: 223 + "-" + a hash of at most 10 characters, with room left.
const maxRevisionPrefix = 223

// ComputeHash returns upstream's pod-template hash, the value Deployments and
// DaemonSets put in their pod-template-hash and controller-revision-hash
// labels: FNV-32a over dump.ForHash of the template, followed by the
// collision count as eight little-endian bytes (a uint32 and four zero bytes)
// when collisionCount is not nil, rendered as the decimal digits of the sum
// passed through rand.SafeEncodeString.
//
// The value depends on the Go types of k8s.io/api: a release that adds a
// field to PodSpec changes the hash of every template. Match existing objects
// with FindReplicaSet or FindRevision rather than by comparing hashes alone.
// A nil template panics, as a programmer error.
func ComputeHash(template *v1.PodTemplateSpec, collisionCount *int32) string {
	if template == nil {
		panic("history: ComputeHash: nil template")
	}
	h := fnv.New32a()
	DeepHashObject(h, *template)
	if collisionCount != nil {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:4], uint32(*collisionCount))
		_, _ = h.Write(b[:])
	}
	return encodeSum(h.Sum32())
}

// HashControllerRevision returns upstream's hash of a revision's data: FNV-32
// (not 32a) over Data.Raw, or, when Data.Object is set, over dump.ForHash of
// the object alone (DeepHashObject resets the hash first, so Raw then does
// not count), followed by the decimal digits of probe when it is not nil. A
// nil revision panics, as a programmer error.
func HashControllerRevision(revision *appsv1.ControllerRevision, probe *int32) string {
	if revision == nil {
		panic("history: HashControllerRevision: nil revision")
	}
	h := fnv.New32()
	if len(revision.Data.Raw) > 0 {
		_, _ = h.Write(revision.Data.Raw)
	}
	if revision.Data.Object != nil {
		DeepHashObject(h, revision.Data.Object)
	}
	if probe != nil {
		_, _ = h.Write([]byte(strconv.FormatInt(int64(*probe), 10)))
	}
	return encodeSum(h.Sum32())
}

// ControllerRevisionName returns prefix-hash, with prefix cut to 223 bytes so
// that the name stays a valid object name.
func ControllerRevisionName(prefix, hash string) string {
	if len(prefix) > maxRevisionPrefix {
		prefix = prefix[:maxRevisionPrefix]
	}
	return prefix + "-" + hash
}

// DeepHashObject resets hasher and writes objectToWrite to it as the spew
// rendering upstream's hashes are defined on (upstream's
// pkg/util/hash.DeepHashObject): pointers are followed and map keys sorted,
// so two equal objects hash alike however they are allocated. The reset is
// part of the contract: HashControllerRevision relies on it to drop what it
// wrote before.
//
// It renders with apimachinery's dump, not k8s.io/utils/dump: the latter
// arrived in a k8s.io/utils newer than Kubernetes 1.34 requires, and from
// v0.36 on apimachinery's forwards to it, so both render the same
// everywhere.
func DeepHashObject(hasher hash.Hash, objectToWrite any) {
	hasher.Reset()
	_, _ = fmt.Fprint(hasher, dump.ForHash(objectToWrite))
}

// encodeSum renders a 32-bit sum the way upstream does: its decimal digits,
// each mapped to a letter or digit that can't spell words.
func encodeSum(sum uint32) string {
	return rand.SafeEncodeString(strconv.FormatUint(uint64(sum), 10))
}
