//go:build tools

// Package tools pins go.etcd.io/etcd/server/v3 so that this module's go.sum fixes every
// dependency of the upstream program the local control plane builds.
package tools

import _ "go.etcd.io/etcd/server/v3"
