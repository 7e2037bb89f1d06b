package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/contract"
	"warmpool.local/warm-pool-autoscaling-keda/e2e/framework"
)

// evictionKeepsTheCountReadable evicts one of the exporter's two replicas through the eviction
// API, as a drain or Auto Mode's consolidation does, while 2 claims exist and the Service is read
// every 200 ms: every read until the replacement is Ready must be a 200 that says 2. A second
// eviction while the first's replacement starts must be refused by the budget.
func (e *realEnv) evictionKeepsTheCountReadable(ctx context.Context, t *testing.T, demandURL string) {
	defer e.holdClaims(ctx, t, "evict-1", "evict-2")()
	waitCounted(ctx, t, demandURL, 2)
	list, err := e.cluster.Client.CoreV1().Pods(e.ns).List(ctx, exporterPods)
	if err != nil {
		t.Fatal(err)
	}
	var serving []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			serving = append(serving, p)
		}
	}
	if len(serving) != contract.DefaultExporterReplicas {
		t.Fatalf("%d running exporter pods, want the %d the program deploys", len(serving), contract.DefaultExporterReplicas)
	}

	reads := &serviceReads{}
	readCtx, stopReading := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); reads.every(readCtx, demandURL, 200*time.Millisecond, 2) }()
	time.Sleep(time.Second) // a few reads before the eviction

	evict := func(p corev1.Pod) error {
		return e.cluster.Client.PolicyV1().Evictions(e.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: e.ns}})
	}
	start := time.Now()
	if err := evict(serving[0]); err != nil {
		stopReading()
		wg.Wait()
		t.Fatalf("evicting %s with its peer Ready: %v", serving[0].Name, err)
	}
	err = evict(serving[1])
	switch {
	case err == nil:
		t.Errorf("the budget let %s go too, with %s already evicted: both replicas down", serving[1].Name, serving[0].Name)
	case apierrors.IsTooManyRequests(err):
		t.Logf("second eviction refused while the first's replacement starts: %v", err)
	default:
		t.Errorf("evicting %s: %v, want 429 from the budget", serving[1].Name, err)
	}
	// The Deployment's status still counts the evicted pod for a moment: wait for the
	// replacement itself to be Ready, then for the Deployment.
	err = framework.EventuallyErr(ctx, "a replacement exporter pod Ready beside the one left", 20*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := e.cluster.Client.CoreV1().Pods(e.ns).List(ctx, exporterPods)
		if err != nil {
			return false, err
		}
		var states []string
		for _, p := range pods.Items {
			if p.Name == serving[0].Name || p.Name == serving[1].Name {
				continue
			}
			if p.DeletionTimestamp == nil && podReady(&p) {
				return true, nil
			}
			states = append(states, p.Name+" "+string(p.Status.Phase))
		}
		return false, fmt.Errorf("no new Ready exporter pod yet: %v", states)
	})
	if err == nil {
		err = framework.WaitDeploymentAvailable(ctx, e.cluster.Client, e.ns, contract.ExporterName, time.Minute)
	}
	time.Sleep(time.Second) // and a few reads after
	stopReading()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("eviction: %s back to %d Ready after %s; the Service answered %d reads: %s",
		serving[0].Name, contract.DefaultExporterReplicas, time.Since(start).Round(time.Second), reads.total, reads.summary())
	if reads.total < 50 || reads.ok != reads.total {
		t.Errorf("with one replica evicted, %d of %d reads of the Service were not a 200 saying 2; first: %s", reads.total-reads.ok, reads.total, reads.firstBad)
	}
}

// serviceReads tallies reads of the exporter's /demand.
type serviceReads struct {
	total, ok int
	byOutcome map[string]int
	firstBad  string
}

// every reads url each interval until ctx ends; a read is good when it is a 200 whose
// active_claims is want.
func (r *serviceReads) every(ctx context.Context, url string, interval time.Duration, want int64) {
	r.byOutcome = map[string]int{}
	for ctx.Err() == nil {
		code, body := framework.HTTPGet(url)
		outcome := fmt.Sprint(code)
		good := false
		if code == http.StatusOK {
			var d struct {
				ActiveClaims int64 `json:"active_claims"`
			}
			if err := json.Unmarshal([]byte(body), &d); err == nil && d.ActiveClaims == want {
				good = true
			} else {
				outcome = fmt.Sprintf("200 saying %q", body)
			}
		}
		r.total++
		r.byOutcome[outcome]++
		if good {
			r.ok++
		} else if r.firstBad == "" {
			r.firstBad = fmt.Sprintf("%s at %s", outcome, time.Now().Format(time.TimeOnly))
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

func (r *serviceReads) summary() string { return fmt.Sprint(r.byOutcome) }

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
