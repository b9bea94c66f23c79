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
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCursor(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    int64
		wantErr bool
	}{
		"empty is the end": {in: "", want: 0},
		"seq form":         {in: "seq:42", want: 42},
		"bare number":      {in: "42", want: 42},
		"zero":             {in: "seq:0", wantErr: true},
		"negative":         {in: "-3", wantErr: true},
		"garbage":          {in: "abc", wantErr: true},
		"double prefix":    {in: "seq:seq:4", wantErr: true},
		"overflow":         {in: "99999999999999999999", wantErr: true},
		"round trip":       {in: FormatCursor(7), want: 7},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCursor(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseCursor(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseCursor(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestLimitClamps(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    int
		wantErr bool
	}{
		"default":    {in: "", want: DefaultLimit},
		"in range":   {in: "50", want: 50},
		"zero to 1":  {in: "0", want: 1},
		"negative":   {in: "-5", want: 1},
		"max":        {in: "1000", want: 1000},
		"above max":  {in: "5000", want: MaxLimit},
		"huge":       {in: "99999999999999999999999", want: MaxLimit},
		"not number": {in: "ten", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseLimit(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseLimit(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseLimit(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
	for in, want := range map[int]int{-1: DefaultLimit, 0: DefaultLimit, 1: 1, 1000: 1000, 1001: 1000} {
		if got := ClampLimit(in); got != want {
			t.Errorf("ClampLimit(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestParseHistoryQuery(t *testing.T) {
	cases := map[string]struct {
		query   string
		want    HistoryQuery
		wantErr bool
	}{
		"defaults": {query: "", want: HistoryQuery{Namespace: "dflt", ReadOptions: ReadOptions{Limit: DefaultLimit}}},
		"everything": {query: "limit=10&cursor=seq:5&includeTools=1&follow=true&namespace=ns1",
			want: HistoryQuery{Namespace: "ns1", Follow: true, ReadOptions: ReadOptions{Limit: 10, BeforeSeq: 5, IncludeTools: true}}},
		"tools off":     {query: "includeTools=0", want: HistoryQuery{Namespace: "dflt", ReadOptions: ReadOptions{Limit: DefaultLimit}}},
		"bad tools":     {query: "includeTools=yes", wantErr: true},
		"bad follow":    {query: "follow=2", wantErr: true},
		"bad cursor":    {query: "cursor=x", wantErr: true},
		"after":         {query: "after=seq:7", want: HistoryQuery{Namespace: "dflt", ReadOptions: ReadOptions{Limit: DefaultLimit, AfterSeq: 7}}},
		"bad after":     {query: "after=0", wantErr: true},
		"bad limit":     {query: "limit=1e3", wantErr: true},
		"clamped limit": {query: "limit=100000", want: HistoryQuery{Namespace: "dflt", ReadOptions: ReadOptions{Limit: MaxLimit}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseHistoryQuery(q, "dflt")
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}
