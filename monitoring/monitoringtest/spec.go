// Package monitoringtest holds what the rules' tests share: the spec they render.
package monitoringtest

import "warmpool.local/warm-pool-autoscaling-keda/monitoring"

// TwoPools is two pools (so the exporter labels each): each rule test also shows that one pool's
// series never fire the other's rule. monitoring's rules_test.go and e2e/monitoring's promtool
// tests render the same spec.
func TwoPools() monitoring.Spec {
	return monitoring.Spec{
		Pools: []monitoring.Pool{
			{Name: "code", Namespace: "agents-code", ScaledObject: "code", HPA: "keda-hpa-code", ExporterPool: "code"},
			{Name: "browser", Namespace: "agents-browser", ScaledObject: "browser", HPA: "keda-hpa-browser", ExporterPool: "browser"},
		},
		ExporterNamespace: "agents", ExporterJob: "claim-exporter",
		NamespaceLabel: "exported_namespace", FallbackFailureThreshold: 3,
		Controllers: monitoring.InstalledControllers(true, true),
		Thresholds:  monitoring.DefaultThresholds(),
	}
}
