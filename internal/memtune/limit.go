// Copyright 2026 The agent-session-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package memtune

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
)

// ContainerLimitEnv names the container's memory limit in bytes, which the Deployment sets
// from limits.memory through the downward API.
const ContainerLimitEnv = "CONTAINER_MEMORY_LIMIT"

// LimitFraction is the share of the container's limit the Go runtime keeps its memory under.
// The kernel kills at the container's resident set, which holds more than the runtime counts
// (the binary's mapped text, pages freed but not yet returned) and grows in bursts between
// two collections; a soft limit at the container's limit itself lets the resident set reach
// it. The caches are long-lived, so a lower target costs more collections, not memory.
const LimitFraction = 0.75

// ManagerLimitFraction is the manager's share, lower: its heap is its informer cache
// (about 1.5 KB per session, the typed object itself half of it), so at 100,000 sessions
// the collector's GOGC headroom alone would take it to three quarters of its 512Mi and its
// resident set near 400 MiB. At 60% it collects harder from about 80,000 sessions on, when
// the live heap is still half the soft limit, and stays near 320 MiB.
const ManagerLimitFraction = 0.6

// ApplyLimit sets the runtime's soft memory limit to LimitFraction of ContainerLimitEnv
// unless GOMEMLIMIT is set (the runtime read it at start and it wins), and returns the limit
// in force in bytes (math.MaxInt64: none).
func ApplyLimit() int64 { return ApplyLimitAt(LimitFraction) }

// ApplyLimitAt is ApplyLimit at another fraction of the container's limit.
func ApplyLimitAt(fraction float64) int64 {
	if os.Getenv("GOMEMLIMIT") == "" {
		if n, err := strconv.ParseInt(os.Getenv(ContainerLimitEnv), 10, 64); err == nil && n > 0 {
			debug.SetMemoryLimit(softLimitAt(n, fraction))
		}
	}
	return debug.SetMemoryLimit(-1)
}

// SoftLimit is the runtime's memory limit for a container limit of n bytes.
func SoftLimit(n int64) int64 { return softLimitAt(n, LimitFraction) }

func softLimitAt(n int64, fraction float64) int64 {
	return int64(math.Floor(float64(n) * fraction))
}
