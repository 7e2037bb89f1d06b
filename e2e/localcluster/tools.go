package localcluster

import "warmpool.local/warm-pool-autoscaling-keda/e2e/localcluster/toolcache"

// neededTools are the control plane's tools less KEDA when it is not started
// (its CRDs and APIService are then not installed either) and less KWOK when
// no node is simulated, plus Karpenter when asked for. A real node's tools are
// built when it is prepared.
func neededTools(opts Options) []string {
	skip := map[string]bool{"kwok": opts.Nodes == 0}
	for _, w := range opts.Without {
		skip["keda"] = skip["keda"] || w == "keda"
	}
	var out []string
	for _, t := range toolcache.ControlPlane {
		if !skip[t] {
			out = append(out, t)
		}
	}
	if opts.Karpenter != nil {
		out = append(out, toolcache.NodeAutoscaler...)
	}
	return out
}
