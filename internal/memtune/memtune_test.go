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
	"runtime/debug"
	"testing"
)

func TestApplyLeavesAChosenGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	if got := Apply(); got != GCPercent || debug.SetGCPercent(100) != GCPercent {
		t.Fatalf("without GOGC: Apply = %d, want %d in force", got, GCPercent)
	}
	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200) // what the runtime read from GOGC at start
	if got := Apply(); got != 200 || debug.SetGCPercent(100) != 200 {
		t.Fatalf("with GOGC=200: Apply = %d, want 200 left in force", got)
	}
}

func TestApplyLimitIsAShareOfTheContainersLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv(ContainerLimitEnv, "536870912") // the Deployment's 512Mi
	if got := ApplyLimit(); got != 384<<20 {
		t.Fatalf("with a 512Mi container: limit %d, want %d (384 MiB)", got, 384<<20)
	}
	if got, want := ApplyLimitAt(ManagerLimitFraction), int64(math.Floor(536870912*ManagerLimitFraction)); got != want {
		t.Fatalf("the manager with a 512Mi container: limit %d, want %d", got, want)
	}
	debug.SetMemoryLimit(1 << 40) // what the runtime read from GOMEMLIMIT at start
	t.Setenv("GOMEMLIMIT", "1TiB")
	if got := ApplyLimitAt(ManagerLimitFraction); got != 1<<40 {
		t.Fatalf("with GOMEMLIMIT set: limit %d, want it left at %d", got, int64(1<<40))
	}
}
