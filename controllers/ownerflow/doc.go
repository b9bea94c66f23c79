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

// Package ownerflow is what the reconcilers share, beside them all as cluster-api's util
// packages sit beside its reconcilers. For the kinds that own turns (SessionSend,
// SubagentRun) it is the step runner (steps.go): the one place that submits turns (RunTurn),
// writes their status (once per reconcile, Events after it), guards against stale reads
// (stale.go), waits for approvals (approval_wait.go), traces (trace.go) and releases an
// object's turns when it finishes, is cancelled (outcome.go) or is deleted. For every
// reconciler it is the one status write (status_write.go), the quiet requeue of conflicts
// (conflict.go), the kstatus conditions (kstatus.go) and the TTL of finished objects (ttl.go).
//
// It is named for the flow of an owner's reconcile, its largest part; it imports no
// reconciler, so every kind's package may import it.
package ownerflow
