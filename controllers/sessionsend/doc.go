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

// Package sessionsend is the SessionSend reconciler: a send's life as one list of steps
// (SessionSendReconciler.Steps in sessionsend_controller.go): cancel, resolveTarget,
// command (command.go), roundOne (starter.go), replyBack (replyback.go), announce, complete;
// a budget stop (budget_stop.go) and an approval wait (approval_wait.go) are named stages of
// them. Finished sends are deleted after their TTL (ttl.go) and handed to the transcript
// store's /events (feed.go). Read ownerflow's steps.go first, then Steps.
package sessionsend
