package config

import (
	"maps"
	"slices"
)

// names lists the keys of k, sorted (for tests).
func (k Keys) names() []string { return slices.Sorted(maps.Keys(k.values)) }
