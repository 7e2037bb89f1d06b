package localcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/warmpool/warm-pool-autoscaling-keda/e2e/process"
	"github.com/warmpool/warm-pool-autoscaling-keda/poll"
)

// addon is a program the control plane runs beside Kubernetes: the CRDs and
// API objects it needs (applied with the bootstrap, before it starts), how it
// starts, and what it is ready by. Its file holds its flags.
type addon struct {
	name string // as Options.Without names it
	// crdTool is the tool whose run-time data holds the add-on's CRDs ("" for none).
	crdTool string
	objects func(p *pki) ([]map[string]any, error)
	start   func(ctx context.Context, p *pki) error
	ready   func(ctx context.Context) error
}

// addons are the add-ons this cluster runs, in start order: agent-sandbox's
// controller, the cluster DNS (only for real nodes, whose pods resolve names),
// and KEDA; Options.Without leaves out the first and the last.
func (c *Cluster) addons() []addon {
	all := []addon{
		{
			name: "agent-sandbox-controller", crdTool: "agent-sandbox",
			start: func(context.Context, *pki) error { return c.startAgentSandboxController(c.Kubeconfig) },
			ready: func(ctx context.Context) error {
				if err := c.healthReady("agent-sandbox-controller", &c.ports.sandboxHealth)(ctx); err != nil || !c.warmPoolCheck {
					return err
				}
				return c.checkWarmPool(ctx)
			},
		},
		{name: "keda", crdTool: "keda", objects: c.kedaAPIObjects,
			start: func(_ context.Context, p *pki) error { return c.startKEDA(p, c.Kubeconfig) },
			ready: c.kedaReady,
		},
	}
	if c.realNodes > 0 {
		dns := addon{name: "cluster DNS", start: func(ctx context.Context, _ *pki) error { return c.startClusterDNS(ctx) }}
		all = []addon{all[0], dns, all[1]}
	}
	var on []addon
	for _, a := range all {
		if !c.without[a.name] {
			on = append(on, a)
		}
	}
	return on
}

func (c *Cluster) startAddons(ctx context.Context, p *pki) error {
	for _, name := range []string{"agent-sandbox-controller", "keda"} {
		if c.without[name] {
			c.say("not starting %s (Options.Without)", name)
		}
	}
	for _, a := range c.addons() {
		if err := a.start(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// addonsReady waits for each add-on's own readiness, in start order.
func (c *Cluster) addonsReady(ctx context.Context) error {
	for _, a := range c.addons() {
		if a.ready == nil {
			continue
		}
		if err := a.ready(ctx); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	return nil
}

// healthReady waits for the named process's /readyz on the port (read when
// it waits: ports are chosen after the list is made).
func (c *Cluster) healthReady(name string, port *int) func(context.Context) error {
	return func(ctx context.Context) error {
		return process.WaitHealthy(ctx, c.proc(name), "http://127.0.0.1:"+strconv.Itoa(*port)+"/readyz", nil, 90*time.Second)
	}
}

// kedaReady waits for the operator's /readyz and for the aggregator to call
// KEDA's metrics adapter Available.
func (c *Cluster) kedaReady(ctx context.Context) error {
	if err := c.healthReady("keda-operator", &c.ports.kedaHealth)(ctx); err != nil {
		return err
	}
	return c.waitFor(ctx, "APIService v1beta1.external.metrics.k8s.io (KEDA's metrics adapter) to be Available", 90*time.Second, func(ctx context.Context) (bool, error) {
		if p := c.proc("keda-adapter"); p != nil && p.Exited() {
			return false, poll.Stop(fmt.Errorf("it exits 0 on start-up errors: %w", p.ExitedError()))
		}
		a, err := c.Dynamic.Resource(APIServiceGVR).Get(ctx, "v1beta1.external.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !ConditionTrue(a, "Available") {
			return false, fmt.Errorf("APIService not Available: %v", a.Object["status"])
		}
		return true, nil
	})
}

// addonObjectsAndCRDs are what the add-ons need applied before they start.
func (c *Cluster) addonObjectsAndCRDs(p *pki) (objs []map[string]any, crdDirs []string, err error) {
	for _, a := range c.addons() {
		if a.objects != nil {
			o, err := a.objects(p)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", a.name, err)
			}
			objs = append(objs, o...)
		}
		if a.crdTool != "" {
			crdDirs = append(crdDirs, filepath.Join(c.Binaries.DataDir(a.crdTool), "crds"))
		}
	}
	return objs, crdDirs, nil
}
