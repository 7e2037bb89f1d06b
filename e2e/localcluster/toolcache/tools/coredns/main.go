// Command coredns is CoreDNS v1.15.0 with only the plugins the local cluster's
// DNS uses: upstream's main (coredns.go) imports every plugin through
// core/plugin, which pulls cloud SDKs in; this one registers the few the
// Corefile names and sets the directive order upstream's plugin.cfg gives
// them (dnsserver.Directives), then runs upstream's coremain unchanged.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives keeps upstream's relative order (plugin.cfg) of the plugins above.
var directives = []string{"bind", "ready", "health", "errors", "log", "cache", "kubernetes"}

func main() {
	dnsserver.Directives = directives
	coremain.Run()
}
