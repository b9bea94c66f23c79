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

package transcript

// APISessionsPath is the root of the internal API that the transcript store serves to the
// manager on a unix socket (or loopback); see server.NewAPIHandler.
const APISessionsPath = "/v1/sessions"

// AppendBody is the internal API's append request and response.
type AppendBody struct {
	Messages []AppendRequest `json:"messages,omitempty"`
	Records  []Record        `json:"records,omitempty"`
}

// HistoryResponse is the JSON of GET /sessions/{sessionKey}/history and of the SSE history event.
type HistoryResponse struct {
	SessionKey string `json:"sessionKey"`
	SessionID  string `json:"sessionId"`
	Namespace  string `json:"namespace"`
	Page
}
