package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/podset"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// Kind is the owner kind the demo plays with.
type Kind int

const (
	// ReplicaSet plays the demo with an apps/v1 ReplicaSet.
	ReplicaSet Kind = iota
	// ReplicationController plays it with a core/v1 ReplicationController.
	ReplicationController
)

// LowCostPods is how many pods step 4 marks as cheap to delete.
const LowCostPods = 3

// Result is what the demo proves.
type Result struct {
	// Final is the owner's progress after the last step.
	Final Progress
	// Cheap are the pods given a low deletion cost; CheapDeleted says
	// whether the scale-down removed every one of them.
	Cheap        []string
	CheapDeleted bool
}

// Play runs the script against cluster, where a controller of kind must
// already run, printing each step to p. Every step waits until the API
// agrees that the owner settled; ctx bounds the whole demo.
func Play(ctx context.Context, p *Printer, cluster *simcluster.Cluster, kind Kind) (Result, error) {
	return play(ctx, p, newWorkload(kind, cluster.Client()), cluster)
}

// Printer writes the demo's lines, each stamped with the time since it was
// made and labelled SIMULATED. It is safe for concurrent use: the
// controller's scale-down reporter calls Decision from its workers.
type Printer struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
}

// Printf prints one line.
func (p *Printer) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "SIMULATED [%5.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// NewPrinter prints to out, timing from now.
func NewPrinter(out io.Writer) *Printer { return &Printer{out: out, start: time.Now()} }

// play is the script. Every step waits until the API agrees that the
// owner settled, printing Progress as it changes.
func play(ctx context.Context, p *Printer, w workload, cluster *simcluster.Cluster) (Result, error) {
	var res Result
	client := cluster.Client()
	step := func(n int, what string) { p.Printf("step %d/5: %s", n, what) }

	step(1, fmt.Sprintf("create %s %q with 10 replicas", w.kind(), demoName))
	if err := w.create(ctx, 10); err != nil {
		return res, fmt.Errorf("creating the %s: %w", w.kind(), err)
	}
	if _, err := waitSettled(ctx, p, w); err != nil {
		return res, err
	}

	step(2, "scale to 100 replicas")
	if err := w.scale(ctx, 100); err != nil {
		return res, fmt.Errorf("scaling to 100: %w", err)
	}
	if _, err := waitSettled(ctx, p, w); err != nil {
		return res, err
	}

	step(3, "delete 10 pods by hand; the controller replaces them")
	pods, err := listDemoPods(ctx, client)
	if err != nil {
		return res, err
	}
	slices.SortFunc(pods, func(a, b v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, pod := range pods[:min(10, len(pods))] {
		if err := client.CoreV1().Pods(demoNamespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
			return res, fmt.Errorf("deleting pod %s: %w", pod.Name, err)
		}
	}
	if _, err := waitSettled(ctx, p, w); err != nil {
		return res, err
	}

	step(4, fmt.Sprintf("give %d pods a low deletion cost (%s=-100)", LowCostPods, podranking.DeletionCostAnnotation))
	pods, err = listDemoPods(ctx, client)
	if err != nil {
		return res, err
	}
	slices.SortFunc(pods, func(a, b v1.Pod) int { return strings.Compare(b.Name, a.Name) })
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"-100"}}}`, podranking.DeletionCostAnnotation)
	for _, pod := range pods[:min(LowCostPods, len(pods))] {
		if _, err := client.CoreV1().Pods(demoNamespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return res, fmt.Errorf("annotating pod %s: %w", pod.Name, err)
		}
		res.Cheap = append(res.Cheap, pod.Name)
	}
	p.Printf("low-cost pods: %s", strings.Join(res.Cheap, ", "))
	// Pods and the owner are watched separately, so nothing orders the
	// annotation updates before the scale-down in the controller's caches.
	// Give its informers a moment; a real user takes longer than this.
	if err := sleepCtx(ctx, annotationSettle); err != nil {
		return res, err
	}

	step(5, "scale down to 5; the controller explains its choices")
	if err := w.scale(ctx, 5); err != nil {
		return res, fmt.Errorf("scaling to 5: %w", err)
	}
	final, err := waitSettled(ctx, p, w)
	if err != nil {
		return res, err
	}
	res.Final = final
	left, err := listDemoPods(ctx, client)
	if err != nil {
		return res, err
	}
	res.CheapDeleted = true
	for _, pod := range left {
		for _, c := range res.Cheap {
			if pod.Name == c {
				res.CheapDeleted = false
			}
		}
	}
	if !res.CheapDeleted {
		return res, errors.New("a low-cost pod survived the scale-down")
	}
	p.Printf("done: every low-cost pod was among the first deleted; %s %q settled at %s", w.kind(), demoName, final)
	return res, nil
}

// annotationSettle is how long step 4 waits for the annotations to reach the
// controller's cache.
const annotationSettle = 300 * time.Millisecond

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitSettled polls the owner until it settles, printing each change.
func waitSettled(ctx context.Context, p *Printer, w workload) (Progress, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last Progress
	shown := ""
	for {
		cur, err := w.read(ctx)
		if err != nil && ctx.Err() == nil {
			return cur, fmt.Errorf("reading the %s: %w", w.kind(), err)
		}
		if err == nil {
			last = cur
			// Print what the reader sees change; pod counts alone move often.
			if line := cur.String(); line != shown {
				p.Printf("  %s", line)
				shown = line
			}
		}
		if err == nil && cur.Settled() {
			return cur, nil
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("waiting for the %s to settle (last seen %s): %w", w.kind(), last, ctx.Err())
		case <-tick.C:
		}
	}
}

// Decision prints a scale-down: up to a few explained choices, then a
// tally of the rules behind the rest.
func (p *Printer) Decision(d podset.ScaleDownDecision) {
	const shown = 6
	p.Printf("  scale-down of %s %s/%s: deleting %d of %d pods", d.Kind, d.Namespace, d.Name, len(d.Chosen), d.Candidates)
	if len(d.Reasons) == 0 {
		p.Printf("    every pod goes, so there was no choice to make")
		return
	}
	tally := map[string]int{}
	for i, r := range d.Reasons {
		if i < shown {
			p.Printf("    %s", r)
		}
		tally[r.Rule.String()]++
	}
	if len(d.Reasons) > shown {
		rules := make([]string, 0, len(tally))
		for rule, n := range tally {
			rules = append(rules, fmt.Sprintf("%s: %d", rule, n))
		}
		slices.Sort(rules)
		p.Printf("    ... and %d more; deciding rule per pod: %s", len(d.Reasons)-shown, strings.Join(rules, ", "))
	}
}
