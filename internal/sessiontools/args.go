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

package sessiontools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Result statuses of the seeds, plus forbidden for a refusal by visibility, the send policy,
// a guard or RBAC (arguments the API server refuses are error: see Refusal).
const (
	StatusAccepted  = "accepted"
	StatusOK        = "ok"
	StatusTimeout   = "timeout"
	StatusError     = "error"
	StatusForbidden = "forbidden"
	// StatusNotFound: what the call names is gone (a restore whose transcript was removed).
	StatusNotFound = "not_found"
)

// StatusResult is the {runId?, status, reply?, error?} result of sessions_send and of
// failed calls. An ok result always carries reply, "" included; NoReply says the target
// answered no text (or exactly REPLY_SKIP), for clients that know the newer field.
type StatusResult struct {
	RunID   string `json:"runId,omitempty"`
	Status  string `json:"status"`
	Reply   string `json:"reply,omitempty"`
	NoReply bool   `json:"noReply,omitempty"`
	Error   string `json:"error,omitempty"`
}

// MarshalJSON writes reply on every ok result, as the seeds' { runId, status: "ok", reply }.
func (r StatusResult) MarshalJSON() ([]byte, error) {
	type plain StatusResult
	if r.Status != StatusOK || r.Reply != "" {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		RunID   string `json:"runId,omitempty"`
		Status  string `json:"status"`
		Reply   string `json:"reply"`
		NoReply bool   `json:"noReply,omitempty"`
		Error   string `json:"error,omitempty"`
	}(r))
}

// ErrorResult is the JSON result of a failed call, in the seeds' {status, error} shape: a
// refusal by visibility, the send policy, a guard, RBAC or the access layer is forbidden
// (ForbiddenError, or the API server's 403), anything else error.
func ErrorResult(err error) string {
	st := StatusError
	if IsForbidden(err) {
		st = StatusForbidden
	}
	b, _ := json.Marshal(StatusResult{Status: st, Error: err.Error()})
	return string(b)
}

// DecodeArgs decodes a call's arguments into v; null or empty arguments are {}.
func DecodeArgs(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// Number is a numeric argument; models also send numbers as strings ("10"), which are
// accepted. V cuts a fraction toward zero; F is the number as given, for arguments that
// round otherwise (SendTimeout rounds up).
type Number struct {
	Set bool
	V   int64
	F   float64
}

func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%s is not a number", b)
	}
	n.Set, n.V, n.F = true, int64(math.Max(math.Min(f, math.MaxInt32), math.MinInt32)), f
	return nil
}

// Or returns the number, or def when it was not given.
func (n Number) Or(def int64) int64 {
	if !n.Set {
		return def
	}
	return n.V
}

// Clamp bounds v to lo..hi.
func Clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// Schema builds a tool's JSON schema from its properties and required names.
func Schema(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // static input
	}
	return b
}
