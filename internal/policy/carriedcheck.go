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


package policy

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Reading a carried chain is on every hop's path (sender, door, webhook), so its checks are
// plain loops over bytes rather than regular expressions, and a value the receiver's SDK
// already decoded (A2A metadata, MCP _meta: a map) is read as it is rather than encoded and
// decoded again. TestCarriedChecksMatchTheGrammar and FuzzParseCarried hold both to the
// slow, obvious forms.

// carriedIDOK: 1 to 128 of A-Z a-z 0-9 . _ : -.
func carriedIDOK(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

// lowerHexOK: exactly n of 0-9 a-f.
func lowerHexOK(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// decimalOK: 1 to 9 digits, then optionally a point and 1 to 9 digits.
func decimalOK(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	return digitsOK(whole) && (!dot || digitsOK(frac))
}

func digitsOK(s string) bool {
	if len(s) < 1 || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// carriedRootOK: SessionSend/<name> or SubagentRun/<name>, name a DNS subdomain of at most 253.
func carriedRootOK(s string) bool {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || (kind != "SessionSend" && kind != "SubagentRun") || len(name) < 1 || len(name) > 253 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		lowerAlnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !lowerAlnum && ((c != '-' && c != '.') || i == 0 || i == len(name)-1) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// errSlowPath: the decoded value holds something the direct reading does not take as it
// is (another spelling of a key, an unexpected type); it is encoded and parsed instead.
var errSlowPath = errors.New("read it the slow way")

// carriedFromMap reads a carried chain from a decoded JSON object with exactly the keys of
// CarriedChain, or says errSlowPath. What it takes is what ParseCarried takes from the
// object's encoding: its fields are those of CarriedChain (each bounded by validate, so the
// encoding is within MaxCarriedBytes), checked by the same validate.
func carriedFromMap(m map[string]any) (*CarriedChain, error) {
	var c CarriedChain
	for k, v := range m {
		if v == nil {
			if k == "id" || k == "hops" || k == "sends" || k == "visited" || k == "budget" || k == "deadline" || k == "root" || k == "seal" {
				continue
			}
			return nil, errSlowPath
		}
		var ok bool
		switch k {
		case "id":
			c.ID, ok = v.(string)
		case "root":
			c.Root, ok = v.(string)
		case "seal":
			c.Seal, ok = v.(string)
		case "hops":
			c.Hops, ok = wholeNumber(v, maxCarriedHops+1)
		case "sends":
			c.Sends, ok = wholeNumber(v, maxCarriedSends+1)
		case "visited":
			c.Visited, ok = stringList(v)
		case "deadline":
			c.Deadline, ok = timeOf(v)
		case "budget":
			c.Budget, ok = budgetOf(v)
		}
		if !ok {
			return nil, errSlowPath
		}
	}
	return &c, c.validate()
}

// wholeNumber is v as an int when it is a whole JSON number below limit (validate bounds
// it further); anything else reads the slow way.
func wholeNumber(v any, limit int) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) >= float64(limit) {
		return 0, false
	}
	return int(f), true
}

func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok || len(list) > MaxCarriedVisited {
		return nil, false
	}
	out := make([]string, len(list))
	for i, e := range list {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func timeOf(v any) (*time.Time, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	var t time.Time
	if t.UnmarshalJSON([]byte(strconv.Quote(s))) != nil {
		return nil, false
	}
	return &t, true
}

// budgetOf reads a budget whose keys are exactly Budget's limits, small whole numbers.
func budgetOf(v any) (*sessionsv1alpha1.Budget, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	var b sessionsv1alpha1.Budget
	for k, e := range m {
		switch k {
		case "maxCost":
			if b.MaxCost, ok = e.(string); !ok {
				return nil, false
			}
		case "maxTokens":
			n, ok := wholeNumber(e, 1<<53)
			if !ok {
				return nil, false
			}
			b.MaxTokens = new(int64(n))
		case "maxTurns":
			n, ok := wholeNumber(e, math.MaxInt32)
			if !ok {
				return nil, false
			}
			b.MaxTurns = new(int32(n))
		default:
			return nil, false
		}
	}
	return &b, true
}

// parseCarriedValue is CarriedFromValue's slow way: encode v and parse it.
func parseCarriedValue(v any) (*CarriedChain, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return ParseCarried(raw)
}
