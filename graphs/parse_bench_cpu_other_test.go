//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package graphs

import "time"

// processCPU is unknown here; benchmarks then report wall time only.
func processCPU() time.Duration { return -1 }
