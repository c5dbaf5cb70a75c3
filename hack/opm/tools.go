//go:build tools

// Package tools pins operator-registry so `go mod tidy` keeps opm's dependencies.
package tools

import _ "github.com/operator-framework/operator-registry/cmd/opm"
