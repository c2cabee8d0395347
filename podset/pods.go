package podset

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/ctrlkit/ctrlkit/childset"
	"github.com/ctrlkit/ctrlkit/internal/ownermemo"
	"github.com/ctrlkit/ctrlkit/podcontrol"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podstate"
	"github.com/ctrlkit/ctrlkit/status"
)

// podSpec is what makes the set core (childset) keep pods as upstream's
// ReplicaSet controller does: it reads the owner through the Kind, builds
// pods from its template, counts upstream's status, and chooses the pods
// a scale-down deletes by upstream's ranking (victims.go).
type podSpec[O childset.Object] struct {
	kind     Kind[O]
	gvk      schema.GroupVersionKind
	cfg      *config
	logger   klog.Logger
	siblings SiblingLister[O] // nil when the Kind lists no siblings
	scaleIn  ScaleInKind[O]   // nil when the Kind names no pods to delete first
	// podsMatching lists the pods of a namespace a selector matches, for
	// the related pods of a ranking (Reads.PodsMatching).
	podsMatching func(namespace string, selector labels.Selector) ([]*v1.Pod, error)
	// rankings keeps, per owner above its wanted count, the facts its
	// last scale-down's ranking read from the pods (podranking.Memo).
	rankings *ownermemo.Store[*ownerRanking]
	// built keeps, per owner, the pod NewChild built from its template.
	built *ownermemo.Store[*builtPod]
}

var (
	_ childset.Spec[*v1.ReplicationController, *v1.Pod]            = podSpec[*v1.ReplicationController]{}
	_ childset.LiveReader[*v1.ReplicationController]               = podSpec[*v1.ReplicationController]{}
	_ childset.MinReadySpec[*v1.ReplicationController]             = podSpec[*v1.ReplicationController]{}
	_ childset.TraitSpec[*v1.ReplicationController, *v1.Pod]       = podSpec[*v1.ReplicationController]{}
	_ childset.ChildStatusSpec[*v1.ReplicationController, *v1.Pod] = podSpec[*v1.ReplicationController]{}
	_ childset.VictimSpec[*v1.ReplicationController, *v1.Pod]      = podSpec[*v1.ReplicationController]{}
	_ childset.OwnerForgetter                                      = podSpec[*v1.ReplicationController]{}
	_ childset.DeletionGateSpec[*v1.ReplicationController]         = podSpec[*v1.ReplicationController]{}
)

func (s podSpec[O]) Get(namespace, name string) (O, error) { return s.kind.Get(namespace, name) }

func (s podSpec[O]) GetLive(ctx context.Context, namespace, name string) (O, error) {
	return s.kind.GetUncached(ctx, namespace, name)
}

func (s podSpec[O]) GroupVersionKind() schema.GroupVersionKind { return s.gvk }

func (s podSpec[O]) Replicas(owner O) int32 { return s.kind.Replicas(owner) }

func (s podSpec[O]) Selector(owner O) (labels.Selector, error) { return s.kind.Selector(owner) }

func (s podSpec[O]) MinReadySeconds(owner O) int32 { return s.kind.MinReadySeconds(owner) }

// NewChild is the pod upstream creates from the owner's template. A nil
// template builds a pod without labels, which the core refuses as one
// whose labels the selector does not match. The core asks for it at every
// sync, for the labels, and never changes it (it creates copies), so the
// pod is kept while the owner's cached object keeps its template: building
// it copies the whole pod spec.
func (s podSpec[O]) NewChild(owner O) (*v1.Pod, error) {
	tmpl := s.kind.Template(owner)
	if tmpl == nil {
		tmpl = &v1.PodTemplateSpec{}
	}
	uid := owner.GetUID()
	built := s.built.Get(cache.MetaObjectToName(owner).String(), func(b *builtPod) bool { return b.uid == uid && b.from == tmpl },
		func() *builtPod { return &builtPod{uid: uid, from: tmpl} })
	if built.pod == nil {
		pod, err := podcontrol.GetPodFromTemplate(tmpl, owner, nil)
		if err != nil {
			return nil, err
		}
		built.pod = pod
	}
	return built.pod, nil
}

// DeletionGate is the Kind's, when it is a childset.DeletionGateSpec: pods
// are held before deletion as any child is. The pods a gate holds are the
// ranking's victims of each sync, so a held scale-in may mark a pod more
// than it deletes when the ranking changes meanwhile.
func (s podSpec[O]) DeletionGate(owner O) childset.DeletionGate {
	if g, ok := s.kind.(childset.DeletionGateSpec[O]); ok {
		return g.DeletionGate(owner)
	}
	return childset.DeletionGate{}
}

// ForgetOwner drops what the pod parts keep for a deleted owner: its
// ranking memo and its built pod.
func (s podSpec[O]) ForgetOwner(key string) {
	s.rankings.Drop(key)
	s.built.Drop(key)
}

// builtPod is the pod NewChild built from an owner's template.
type builtPod struct {
	uid  types.UID
	from *v1.PodTemplateSpec
	pod  *v1.Pod
}

// The traits of a pod: the core's ready bit, and whether the pod carries
// every label of the owner's template, which upstream's status counts.
const traitFullyLabeled childset.Traits = 1 << 1

// Traits classifies pods as upstream's status counts them, without
// minReadySeconds (availability, which depends on the time, is no trait).
func (s podSpec[O]) Traits(owner O) func(*v1.Pod) childset.Traits {
	counter := status.NewReplicaCounter(s.templateLabels(owner), 0, time.Time{})
	return func(pod *v1.Pod) childset.Traits {
		class := counter.Classify(pod)
		var t childset.Traits
		if class&status.Ready != 0 {
			t |= childset.TraitReady
		}
		if class&status.FullyLabeled != 0 {
			t |= traitFullyLabeled
		}
		return t
	}
}

func (s podSpec[O]) TraitsKey(owner O) string { return labels.Set(s.templateLabels(owner)).String() }

func (s podSpec[O]) templateLabels(owner O) map[string]string {
	if tmpl := s.kind.Template(owner); tmpl != nil {
		return tmpl.Labels
	}
	return nil
}

// UpdateChildStatus writes upstream's status through the Kind. Without
// minReadySeconds a pod is available exactly when it is ready, so the
// counts come from the traits the claim pass read, and no pod is read
// again; with it, availability depends on the time, and the pods are
// counted as upstream counts them.
func (s podSpec[O]) UpdateChildStatus(ctx context.Context, owner O, st childset.Status, seen childset.Seen[*v1.Pod]) (O, error) {
	s.dropRankingWhenSettled(owner, st)
	in := StatusInput{
		Active: seen.Active, Terminating: seen.Terminating,
		TerminatingReplicas: s.cfg.gates(DeploymentReplicaSetTerminatingReplicas),
		ManageErr:           st.ManageErr, SpecErr: st.SpecErr, Now: seen.Now,
		minReadySeconds: s.kind.MinReadySeconds(owner), templateLabels: s.templateLabels(owner),
	}
	if in.minReadySeconds <= 0 {
		in.counts, in.counted = countTraits(seen.Traits), true
	}
	return s.kind.UpdateStatus(ctx, owner, in)
}

// countTraits counts upstream's status of active pods from their traits,
// for an owner without minReadySeconds.
func countTraits(traits []childset.Traits) status.ReplicaCounts {
	counts := status.ReplicaCounts{Replicas: int32(len(traits))}
	for _, t := range traits {
		if t&traitFullyLabeled != 0 {
			counts.FullyLabeledReplicas++
		}
		if t.Ready() {
			counts.ReadyReplicas++
			counts.AvailableReplicas++
		}
	}
	return counts
}

// ownerRanking is an owner's ranking memo, with the owner's UID, so that a
// re-created owner of the same name starts afresh.
type ownerRanking struct {
	uid  types.UID
	memo *podranking.Memo
}

// dropRankingWhenSettled forgets the ranking memo of an owner no longer
// above its wanted count, so that an owner done scaling down keeps no old
// pods through it.
func (s podSpec[O]) dropRankingWhenSettled(owner O, st childset.Status) {
	if st.Replicas <= max(s.kind.Replicas(owner), 0) {
		s.rankings.Drop(cache.MetaObjectToName(owner).String())
	}
}

// podKind is the core's view of pods: read from the pod informer's index,
// ready and ready since when podstate says, finished once Succeeded or
// Failed.
type podKind struct {
	childset.Lister[*v1.Pod]
}

var (
	_ childset.Kind[*v1.Pod]           = podKind{}
	_ childset.ReadySinceKind[*v1.Pod] = podKind{}
	_ childset.FinishedKind[*v1.Pod]   = podKind{}
)

func (podKind) Ready(pod *v1.Pod) bool { return podstate.IsReady(pod) }

func (podKind) ReadySince(pod *v1.Pod) time.Time {
	if !podstate.IsReady(pod) {
		return time.Time{}
	}
	return podstate.ReadyTime(pod).Time
}

func (podKind) Finished(pod *v1.Pod) bool { return podstate.IsPodPhaseTerminal(pod.Status.Phase) }
