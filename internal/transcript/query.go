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

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// HistoryQuery is the parsed query string of GET /sessions/{sessionKey}/history.
type HistoryQuery struct {
	Namespace string
	ReadOptions
	Follow bool
}

// FormatCursor is the cursor that pages to the messages before seq.
func FormatCursor(seq int64) string { return "seq:" + strconv.FormatInt(seq, 10) }

// ParseCursor accepts "seq:N" or "N" (N >= 1) and returns N; "" is 0 (from the end).
func ParseCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "seq:"), 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("invalid cursor %q: want seq:N or N with N >= 1", s)
	}
	return n, nil
}

// ClampLimit maps a requested page size into 1..MaxLimit; 0 or less means DefaultLimit.
func ClampLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}

// ParseLimit parses the limit parameter: empty is the default, anything else is clamped.
func ParseLimit(s string) (int, error) {
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !strings.HasPrefix(s, "-") {
			return MaxLimit, nil
		}
		return 0, fmt.Errorf("invalid limit %q", s)
	}
	if n < 1 {
		return 1, nil
	}
	return ClampLimit(n), nil
}

func parseFlag(name, s string) (bool, error) {
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("invalid %s %q: want 1 or 0", name, s)
	}
	return b, nil
}

// ParseHistoryQuery parses limit, cursor, after, includeTools, follow and namespace.
func ParseHistoryQuery(q url.Values, defaultNamespace string) (HistoryQuery, error) {
	var hq HistoryQuery
	var err error
	if hq.Limit, err = ParseLimit(q.Get("limit")); err != nil {
		return hq, err
	}
	if hq.BeforeSeq, err = ParseCursor(q.Get("cursor")); err != nil {
		return hq, err
	}
	if hq.AfterSeq, err = ParseCursor(q.Get("after")); err != nil {
		return hq, fmt.Errorf("after: %w", err)
	}
	if hq.IncludeTools, err = parseFlag("includeTools", q.Get("includeTools")); err != nil {
		return hq, err
	}
	if hq.Follow, err = parseFlag("follow", q.Get("follow")); err != nil {
		return hq, err
	}
	hq.Namespace = q.Get("namespace")
	if hq.Namespace == "" {
		hq.Namespace = defaultNamespace
	}
	return hq, nil
}
