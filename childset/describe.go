package childset

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fields is an owner's fields the core acts on, handed over at once by a
// Spec's Describe (Describer) instead of one getter each. A host that
// takes Describers (childsetcr) reads them as Replicas, Selector,
// MinReadySpec, DeletionGateSpec and, through Status, CollisionCountSpec
// and ProgressSpec's StoredProgress would be read, with the defaults said
// on each field.
type Fields struct {
	// Replicas is how many children the owner wants; nil means 1, as for
	// a Deployment.
	Replicas *int32
	// Selector selects the owner's children; nil selects nothing, which
	// the core refuses with an event (ReasonSelectorMismatch).
	Selector *metav1.LabelSelector
	// MinReadySeconds is how long a ready child must stay ready to count
	// as available (see ReadySinceKind).
	MinReadySeconds int32
	// Status points at the owner's status when it is laid out as
	// StatusFields (a conversion of &owner.Status); nil when the owner has
	// none. The stored collision count and progress are read there, and
	// the host writes each sync's status through it, on a copy of the
	// owner, only when it changed.
	Status *StatusFields
	// DeletionGate is the owner's pre-delete gate (DeletionGateSpec); a
	// zero Label means none.
	DeletionGate DeletionGate
}

// RolloutFields is Fields with an owner's rolling update, for a kind whose
// owners roll out (RolloutDescriber).
type RolloutFields struct {
	Fields
	// RollingUpdate is the owner's rolling update; nil means it has none,
	// and children of an older template stay as they are (RolloutSpec's
	// RollingUpdate reporting false).
	RollingUpdate *RollingUpdate
	// RevisionHistoryLimit is how many revisions no child is at are kept;
	// nil means DefaultRevisionHistoryLimit.
	RevisionHistoryLimit *int32
	// Paused holds the rollout: the owner scales at the current revision
	// and replaces no child (PauseSpec).
	Paused bool
	// ProgressDeadlineSeconds is how long a rollout may go without a step
	// forward before its Progressing condition says it is stuck; nil means
	// no deadline and no condition (ProgressSpec).
	ProgressDeadlineSeconds *int32
	// UpdateStrategy is how a child moves to a new revision; "" means
	// Recreate (UpdateStrategySpec).
	UpdateStrategy UpdateStrategy
}

// Describer is implemented by a Spec that hands the core its owners'
// fields at once.
type Describer[O Object] interface {
	Describe(owner O) Fields
}

// RolloutDescriber is implemented by a Spec whose owners roll out: its
// Describe's answer has a rolling update too. That Describe returns
// RolloutFields, not Fields, is what tells a host that the kind rolls out,
// and so needs its revisions kept, before any owner is seen.
type RolloutDescriber[O Object] interface {
	Describe(owner O) RolloutFields
}

// StatusFields is an owner's status laid out as a Deployment's. A kind
// whose status type has exactly these fields, in this order (the JSON
// tags may differ), converts a pointer to it into a *StatusFields for
// Fields.Status; a new kind may use it as its status type.
type StatusFields struct {
	ObservedGeneration  int64  `json:"observedGeneration,omitempty"`
	Replicas            int32  `json:"replicas,omitempty"`
	ReadyReplicas       int32  `json:"readyReplicas,omitempty"`
	AvailableReplicas   int32  `json:"availableReplicas,omitempty"`
	UpdatedReplicas     int32  `json:"updatedReplicas,omitempty"`
	CurrentReplicas     int32  `json:"currentReplicas,omitempty"`
	TerminatingReplicas int32  `json:"terminatingReplicas,omitempty"`
	CurrentRevision     string `json:"currentRevision,omitempty"`
	UpdateRevision      string `json:"updateRevision,omitempty"`
	// CollisionCount is persisted so that a new revision whose name
	// collides is not looked for under the same names again.
	CollisionCount *int32 `json:"collisionCount,omitempty"`
	// Conditions holds Progressing, with a progress deadline.
	Conditions []appsv1.DeploymentCondition `json:"conditions,omitempty"`
}

// Fields is st laid out as an owner's status, storedCollisions being the
// collision count the owner's status holds now: the sync's count while the
// owner rolls out, and storedCollisions, kept as it is, while it does not
// (a rollout turned off and on again then resumes from it).
func (st Status) Fields(storedCollisions *int32) StatusFields {
	collisions := storedCollisions
	if st.UpdateRevision != "" {
		count := st.CollisionCount
		collisions = &count
	}
	return StatusFields{
		ObservedGeneration: st.ObservedGeneration,
		Replicas:           st.Replicas, ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas,
		UpdatedReplicas: st.UpdatedReplicas, CurrentReplicas: st.CurrentReplicas, TerminatingReplicas: st.TerminatingReplicas,
		CurrentRevision: st.CurrentRevision, UpdateRevision: st.UpdateRevision,
		CollisionCount: collisions, Conditions: st.Conditions,
	}
}
