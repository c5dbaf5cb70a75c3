// Command pause is the sandbox ("pause") container of `tessera dev up --real-nodes`: it holds a pod's namespaces
// open, reaps the zombies it inherits as the pod's PID 1, and exits on SIGINT or SIGTERM, like Kubernetes'
// build/pause (C), built here in Go so the node needs no C toolchain and no image from the internet.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
