package api

import (
	"github.com/questbox/questbox/internal/clock"
	"github.com/questbox/questbox/internal/config"
)

// What the faces (MQTT, the dashboard, /metrics) take from below the API
// besides its views: the clock they time their work on and the settings
// they serve by, offered here so that a face imports this package and
// nothing else of questbox (engine/layers_test.go pins it). These are the
// lower packages' own types, not copies, so the daemon hands a face what
// it already has.

// Clock is the program's clock (package internal/clock): the wall clock
// in the daemon, a fake one in tests.
type Clock = clock.Clock

// WallClock returns the wall clock.
func WallClock() Clock { return clock.Real{} }

// DashboardConfig is the [dashboard] section of the configuration, which
// the dashboard serves by.
type DashboardConfig = config.Dashboard

// ReadPublic is the DashboardConfig.Read that lets anyone read.
const ReadPublic = config.ReadPublic

// DefaultDashboardConfig is the [dashboard] section's defaults.
func DefaultDashboardConfig() DashboardConfig { return config.Default().Dashboard }
