package framework

import (
	"fmt"
	"io"
	"strings"
)

// NextSteps is what the demo prints when it is done: commands a newcomer types, as printed, into
// one shell in the repository's root, against the control plane and stack the demo left up. A
// live test runs them as printed (e2e's "the demo's closing commands"), so each must work on the
// machine the demo set up: kubectl by its path in the tool cache (the README's setup installs
// none), verify through `go run` (Go is all the README asks for).
type NextSteps struct {
	Kubeconfig  string
	Kubectl     string // the tool cache's kubectl
	Namespace   string
	Exporter    string // the exporter's Deployment, when it runs in the cluster ("" when it is a local process)
	DemandURL   string // the local exporter's /demand, when it is a local process
	Curl        bool   // curl is on PATH: the local exporter's answer is shown with it
	OutputsFile string
	StateDir    string // the control plane's state, which the teardown command names
}

// Hint is one command to type and what it is for.
type Hint struct{ Command, Why string }

// Explore is the commands that look at what the demo left up, in the order to type them.
func (n NextSteps) Explore() []Hint {
	k := shellQuote(n.Kubectl)
	hints := []Hint{
		{"export KUBECONFIG=" + shellQuote(n.Kubeconfig), "the demo's control plane"},
		{fmt.Sprintf("%s -n %s get sandboxwarmpool,sandboxclaim,scaledobject,hpa,pods -o wide", k, n.Namespace),
			"the pool, its claims, the ScaledObject and the HPA KEDA made"},
	}
	verify := fmt.Sprintf("go run ./verify --outputs-file %s --kubeconfig %s", shellQuote(n.OutputsFile), shellQuote(n.Kubeconfig))
	if n.Exporter != "" {
		hints = append(hints, Hint{fmt.Sprintf("%s -n %s logs deploy/%s", k, n.Namespace, n.Exporter), "the exporter's log"})
	} else {
		if n.Curl {
			hints = append(hints, Hint{"curl -s " + shellQuote(n.DemandURL), "what KEDA reads: the exporter's count"})
		}
		verify += " --exporter-url " + shellQuote(n.DemandURL)
	}
	return append(hints,
		Hint{"cat " + shellQuote(n.OutputsFile), "the stack's outputs, as verify reads them"},
		Hint{verify + " --phase demand", "verify again: claims up and down, the pool following (--phase all adds the run without the autoscaler)"},
	)
}

// Teardown is the command that removes what the demo made.
func (n NextSteps) Teardown() Hint {
	return Hint{"go run -C e2e/localcluster ./cmd/localcluster down --state " + shellQuote(n.StateDir),
		"removes every process it started and, with a real node, every mount, interface and rule"}
}

// Print writes the steps as the demo shows them.
func (n NextSteps) Print(w io.Writer) {
	fmt.Fprintf(w, "\nThe local control plane is still up, with the stack deployed. Explore it from this directory:\n")
	for _, h := range n.Explore() {
		fmt.Fprintf(w, "  %s\n      # %s\n", h.Command, h.Why)
	}
	// The Pulumi CLI would need its Go language host to run this program, which the tool cache
	// does not build: the demo runs the program in-process through the Automation API instead.
	fmt.Fprintf(w, "A stack of this program run by the Pulumi CLI (README.md, \"On AWS\") needs the CLI's Go language\n"+
		"host, which a standard Pulumi install has and this setup does not build: the demo ran the program in-process.\n")
	t := n.Teardown()
	fmt.Fprintf(w, "Tear it down (%s):\n  %s\n", t.Why, t.Command)
	fmt.Fprintf(w, "Logs of every process: %s/logs\n", n.StateDir)
}

// shellQuote quotes s for a POSIX shell when it holds anything but the characters paths and
// URLs of this machine are made of.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
