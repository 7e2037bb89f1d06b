package verifier

import (
	"context"
	"fmt"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"warmpool.local/warm-pool-autoscaling-keda/contract/gvr"
)

// readPathReading is one reading, part by part, of what KEDA's read of the exporter passes
// through: one read of the count as verify reads it, the exporter Service's ready endpoints,
// and KEDA's own status for the ScaledObject. KEDA's status lags an outage by its failure
// threshold (Happy with 0 failures for tens of seconds after every exporter replica is gone),
// so it is corroborated by what verify reads itself, and each part is named when broken.
type readPathReading struct {
	broken   []string // the parts found broken, each with what was read
	evidence []string // every part's reading
}

func (p readPathReading) ok() bool { return len(p.broken) == 0 }

func (p readPathReading) String() string {
	if p.ok() {
		return "the read path reads whole (" + strings.Join(p.evidence, "; ") + ")"
	}
	return "the read path is broken at " + strings.Join(p.broken, ", and at ") +
		": KEDA gets no count, so the pool is held where it is (its fallback) whatever demand does (read: " + strings.Join(p.evidence, "; ") + ")"
}

// readPath takes the reading. withKEDA also reads the ScaledObject's status; the precondition,
// which has just judged that status, reads only the other two parts.
func (r *Runner) readPath(ctx context.Context, withKEDA bool) readPathReading {
	var p readPathReading
	if d, err := r.demand.Read(ctx); err != nil {
		p.broken = append(p.broken, "the exporter (a read of the count failed: "+err.Error()+")")
		p.evidence = append(p.evidence, "the count: read failed: "+err.Error())
	} else {
		p.evidence = append(p.evidence, "the count: "+d.String())
	}
	// With --exporter-url verify reads the exporter directly, and KEDA reads what the pool's
	// exporterUrl names: the stack's Service is not on either path.
	if r.cfg.ExporterURL == "" {
		svc := r.cfg.stackNamespace() + "/" + r.cfg.ExporterService
		ready, notReady, err := readyEndpoints(ctx, r, r.cfg.stackNamespace(), r.cfg.ExporterService)
		switch {
		case err != nil:
			p.evidence = append(p.evidence, fmt.Sprintf("service %s: its endpoints could not be read: %v", svc, err))
		case ready == 0:
			p.broken = append(p.broken, fmt.Sprintf("the exporter's Service %s (no ready endpoint, %d not ready: no exporter replica is serving)", svc, notReady))
			p.evidence = append(p.evidence, fmt.Sprintf("service %s: 0 ready endpoints, %d not ready", svc, notReady))
		default:
			p.evidence = append(p.evidence, fmt.Sprintf("service %s: %d ready endpoint(s), %d not ready", svc, ready, notReady))
		}
	}
	if withKEDA {
		so, err := r.dyn.Resource(gvr.ScaledObject).Namespace(r.cfg.Namespace).Get(ctx, r.cfg.ScaledObject, metav1.GetOptions{})
		if err != nil {
			p.evidence = append(p.evidence, fmt.Sprintf("scaledobject/%s could not be read: %v", r.cfg.ScaledObject, err))
		} else if bad, _, ev := fallbackReading(so); bad {
			p.broken = append(p.broken, "KEDA's read of the exporter (its status says so)")
			p.evidence = append(p.evidence, ev)
		} else {
			p.evidence = append(p.evidence, ev)
		}
	}
	return p
}

// readyEndpoints counts the endpoints of a Service's EndpointSlices by readiness (an endpoint
// whose ready condition is unset counts as ready, as the API defines it).
func readyEndpoints(ctx context.Context, r *Runner, ns, service string) (ready, notReady int, err error) {
	slices, err := r.kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return 0, 0, err
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready++
			} else {
				notReady++
			}
		}
	}
	return ready, notReady, nil
}
