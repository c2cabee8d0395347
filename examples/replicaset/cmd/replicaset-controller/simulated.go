package main

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

	"github.com/ctrlkit/ctrlkit/examples/replicaset"
	"github.com/ctrlkit/ctrlkit/podranking"
	"github.com/ctrlkit/ctrlkit/simcluster"
)

// lowCostPods is how many pods step 4 marks as cheap to delete.
const lowCostPods = 3

// demoResult is what the demo proves, for its test.
type demoResult struct {
	// final is the owner's progress after the last step.
	final progress
	// cheap are the pods given a low deletion cost; cheapDeleted says
	// whether the scale-down removed every one of them.
	cheap        []string
	cheapDeleted bool
	// decisions are the scale-down decisions the controller reported.
	decisions []replicaset.ScaleDownDecision
}

// printer writes the demo's lines, each stamped with the time since start
// and labelled SIMULATED. It is shared with the controller's scale-down
// reporter, which runs on worker goroutines.
type printer struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "SIMULATED [%5.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// runSimulated starts the in-memory cluster and the controller on it, then
// plays the demo (or idles with --demo=false) until the demo ends, drain is
// closed (graceful stop) or ctx is done (immediate stop).
func runSimulated(ctx context.Context, drain <-chan struct{}, o options, out io.Writer) error {
	_, err := simulate(ctx, drain, o, out)
	return err
}

func simulate(ctx context.Context, drain <-chan struct{}, o options, out io.Writer) (demoResult, error) {
	p := &printer{out: out, start: time.Now()}
	cluster := simcluster.New(simcluster.WithNodes(o.simNodes), simcluster.WithStartupDelay(o.simDelay))
	p.printf("no --kubeconfig and not in a cluster: running on an in-memory SIMULATED cluster (%d fake nodes, pods start after %v)",
		o.simNodes, o.simDelay)
	p.printf("nothing here touches a real cluster; pods are simulated, no container runs")

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { _ = cluster.Run(ctx) })

	var (
		mu        sync.Mutex
		decisions []replicaset.ScaleDownDecision
	)
	report := replicaset.WithScaleDownReporter(func(d replicaset.ScaleDownDecision) {
		mu.Lock()
		decisions = append(decisions, d)
		mu.Unlock()
		printDecision(p, d)
	})

	// The controller stops gracefully when the demo ends or on drain; the
	// demo stops on drain too.
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopGracefully := func() { stopOnce.Do(func() { close(stop) }) }
	demoCtx, stopDemo := context.WithCancel(ctx)
	defer stopDemo()
	wg.Go(func() {
		select {
		case <-drain:
			stopDemo()
			stopGracefully()
		case <-demoCtx.Done():
		}
	})

	var (
		res     demoResult
		demoErr error
	)
	if o.demo {
		wg.Go(func() {
			// The demo ends the run either way: done, failed or timed out.
			defer stopGracefully()
			dctx, dcancel := context.WithTimeout(demoCtx, o.demoTimeout)
			defer dcancel()
			res, demoErr = playDemo(dctx, p, newWorkload(o.kind, cluster.Client()), cluster)
			if demoErr != nil && demoCtx.Err() != nil && !errors.Is(dctx.Err(), context.DeadlineExceeded) {
				demoErr = nil // interrupted by a signal: not a failure
				p.printf("interrupted; draining and exiting")
			}
		})
	} else {
		p.printf("--demo=false: the controller runs idle on the simulated cluster; interrupt to exit")
	}
	metrics, err := newControllerMetrics()
	if err != nil {
		return res, err
	}
	o.metrics = metrics
	err = serve(ctx, stop, o, sameClient(cluster.Client()), []replicaset.Option{report}, true)
	stopDemo()
	cancel()
	wg.Wait()
	if o.demo && demoErr == nil && err == nil {
		p.printf("metrics: %s", metrics.summary())
	}
	mu.Lock()
	res.decisions = decisions
	mu.Unlock()
	if err != nil {
		return res, err
	}
	return res, demoErr
}

// playDemo is the script. Every step waits until the API agrees that the
// owner settled, printing progress as it changes.
func playDemo(ctx context.Context, p *printer, w workload, cluster *simcluster.Cluster) (demoResult, error) {
	var res demoResult
	client := cluster.Client()
	step := func(n int, what string) { p.printf("step %d/5: %s", n, what) }

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

	step(4, fmt.Sprintf("give %d pods a low deletion cost (%s=-100)", lowCostPods, podranking.DeletionCostAnnotation))
	pods, err = listDemoPods(ctx, client)
	if err != nil {
		return res, err
	}
	slices.SortFunc(pods, func(a, b v1.Pod) int { return strings.Compare(b.Name, a.Name) })
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"-100"}}}`, podranking.DeletionCostAnnotation)
	for _, pod := range pods[:min(lowCostPods, len(pods))] {
		if _, err := client.CoreV1().Pods(demoNamespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return res, fmt.Errorf("annotating pod %s: %w", pod.Name, err)
		}
		res.cheap = append(res.cheap, pod.Name)
	}
	p.printf("low-cost pods: %s", strings.Join(res.cheap, ", "))
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
	res.final = final
	left, err := listDemoPods(ctx, client)
	if err != nil {
		return res, err
	}
	res.cheapDeleted = true
	for _, pod := range left {
		for _, c := range res.cheap {
			if pod.Name == c {
				res.cheapDeleted = false
			}
		}
	}
	if !res.cheapDeleted {
		return res, errors.New("a low-cost pod survived the scale-down")
	}
	p.printf("done: every low-cost pod was among the first deleted; %s %q settled at %s", w.kind(), demoName, final)
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
func waitSettled(ctx context.Context, p *printer, w workload) (progress, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last progress
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
				p.printf("  %s", line)
				shown = line
			}
		}
		if err == nil && cur.settled() {
			return cur, nil
		}
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("waiting for the %s to settle (last seen %s): %w", w.kind(), last, ctx.Err())
		case <-tick.C:
		}
	}
}

// printDecision prints a scale-down: up to a few explained choices, then a
// tally of the rules behind the rest.
func printDecision(p *printer, d replicaset.ScaleDownDecision) {
	const shown = 6
	p.printf("  scale-down of %s %s/%s: deleting %d of %d pods", d.Kind, d.Namespace, d.Name, len(d.Chosen), d.Candidates)
	if len(d.Reasons) == 0 {
		p.printf("    every pod goes, so there was no choice to make")
		return
	}
	tally := map[string]int{}
	for i, r := range d.Reasons {
		if i < shown {
			p.printf("    %s", r)
		}
		tally[r.Rule.String()]++
	}
	if len(d.Reasons) > shown {
		rules := make([]string, 0, len(tally))
		for rule, n := range tally {
			rules = append(rules, fmt.Sprintf("%s: %d", rule, n))
		}
		slices.Sort(rules)
		p.printf("    ... and %d more; deciding rule per pod: %s", len(d.Reasons)-shown, strings.Join(rules, ", "))
	}
}
