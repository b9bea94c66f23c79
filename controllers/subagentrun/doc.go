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

// Package subagentrun is the SubagentRun reconciler: sessions_spawn as an object, through
// the steps listed in SubagentRunReconciler.Steps (subagentrun_controller.go): cancel,
// resolveAgent, ensureChild (fork.go, thread.go), accept (attachments.go), task, announce,
// cleanup (archive.go); a budget stop (budget_stop.go) and an approval wait
// (approval_wait.go) are named stages of them.
package subagentrun
