//go:build tools

// Package tools pins Prometheus's server command so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"
