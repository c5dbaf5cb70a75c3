//go:build tools

// Package tools pins kube-rbac-proxy so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/brancz/kube-rbac-proxy/cmd/kube-rbac-proxy"
