// Package contract holds what the parts of the project agree on: the API coordinates of
// agent-sandbox and KEDA, label keys, the RuntimeClass name, the exporter's /demand answer,
// the stack's default names and the pinned upstream versions. The components, verify, the local
// control plane and the tests import it; it imports only the standard library.
//
// The exporter keeps its own copy of the names it uses, because it ships as source in a pod
// (exporter.PodSource) and must import nothing of the project; exporter_test.go holds the two
// equal.
package contract
