//go:build tools

// Package tools pins operator-lifecycle-manager so `go mod tidy` keeps the olm and catalog operators' dependencies.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
)
