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

package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestTruncate(t *testing.T) {
	cases := map[string]struct {
		s    string
		max  int
		want string
	}{
		"fits":                  {s: "hello", max: 5, want: "hello"},
		"empty":                 {s: "", max: 0, want: ""},
		"ascii cut":             {s: "hello world", max: 8, want: "hello" + Marker},
		"marker counts":         {s: "abcdef", max: len(Marker) + 1, want: "a" + Marker},
		"two-byte rune":         {s: "ééééé", max: 8, want: "éé" + Marker},
		"never splits a rune":   {s: "aéééé", max: 5, want: "a" + Marker},
		"four-byte rune":        {s: "😀😀😀", max: 10, want: "😀" + Marker},
		"no room for a rune":    {s: "😀😀", max: 5, want: Marker},
		"limit under marker":    {s: "abcdef", max: 2, want: "ab"},
		"limit under marker ut": {s: "éé", max: 1, want: ""},
		"zero limit":            {s: "abc", max: 0, want: ""},
	}
	for name, tc := range cases {
		got := Truncate(tc.s, tc.max)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: Truncate(%q, %d) (-want +got):\n%s", name, tc.s, tc.max, diff)
		}
		if len(got) > tc.max || !utf8.ValidString(got) {
			t.Errorf("%s: %q is %d bytes (limit %d) or not UTF-8", name, got, len(got), tc.max)
		}
	}
}

func TestPrefix(t *testing.T) {
	cases := map[string]struct {
		s    string
		max  int
		want string
	}{
		"fits":           {s: "abc", max: 3, want: "abc"},
		"cut":            {s: "abcdef", max: 4, want: "abcd"},
		"rune boundary":  {s: "aé", max: 2, want: "a"},
		"negative limit": {s: "abc", max: -1, want: ""},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, Prefix(tc.s, tc.max)); diff != "" {
			t.Errorf("%s: Prefix(%q, %d) (-want +got):\n%s", name, tc.s, tc.max, diff)
		}
	}
}

// FuzzTruncate holds the two promises for any input: within the limit, valid UTF-8 kept valid.
func FuzzTruncate(f *testing.F) {
	f.Add("héllo wörld 😀", 7)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 0 || limit > 1<<16 || !utf8.ValidString(s) {
			return
		}
		got := Truncate(s, limit)
		if len(got) > limit || !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q", s, limit, got)
		}
		if got != s && !strings.HasPrefix(s, strings.TrimSuffix(got, Marker)) {
			t.Fatalf("Truncate(%q, %d) = %q is not a prefix", s, limit, got)
		}
	})
}
