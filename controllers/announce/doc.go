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

// Package announce delivers an announce: a send's or run's reply told to the session's
// channel through the SessionPolicy's sinks (webhook, events, Telegram, Discord, WhatsApp,
// Slack), asked of the send policy first, and a tool call's wait for approval told the same
// way. It also holds the texts of the announce turns (text.go). The SessionSend, SubagentRun
// and ToolApproval reconcilers share one Announcer, built by controllers.SetupWithManager.
package announce
