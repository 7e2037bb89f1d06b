package exporter

// The exporter's copy of the names it shares with the rest of the project (package contract):
// it ships as source in a pod and imports nothing of the project. contract/exporter_test.go holds
// the two equal.
const (
	// ClaimsGroup, ClaimsVersion and ClaimsResource are the one resource the exporter reads.
	ClaimsGroup    = "extensions.agents.x-k8s.io"
	ClaimsVersion  = "v1beta1"
	ClaimsResource = "sandboxclaims"
	// DemandPath serves DemandResponse for the one pool; DemandPath + "/" + <pool> serves each
	// pool's.
	DemandPath = "/demand"
	// PoolsEnv lists the pools to count (JSON, see ParsePools).
	PoolsEnv = "EXPORTER_POOLS"
)
