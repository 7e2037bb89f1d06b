// Command pause is the sandbox ("pause") container of the real nodes' pods:
// it holds the pod's namespaces, reaps orphans (it is PID 1 of a pod sharing
// its PID namespace) and exits on SIGINT or SIGTERM. It is built locally and
// imported into containerd, so no registry is needed.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
