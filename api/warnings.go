package api

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/graphs"
)

// warnHeader returns a graphs.Options.Warn that adds each document warning
// (a duplicate YAML key, accepted as Fuel's loader accepted it) to the
// answer as a Warning header (299, a persistent warning), one per warning.
// Call it before the answer is written.
func warnHeader(c echo.Context) func(graphs.Error) {
	return func(e graphs.Error) {
		c.Response().Header().Add("Warning", "299 cairn "+strconv.Quote(e.Error()))
	}
}
