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

package sandbox

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWorkspacePath(t *testing.T) {
	cases := map[string]struct {
		in   string
		want string
		err  bool
	}{
		"empty is the workspace":        {in: "", want: "."},
		"dot":                           {in: ".", want: "."},
		"relative":                      {in: "src/main.go", want: "src/main.go"},
		"relative cleaned":              {in: "./src//a/../main.go", want: "src/main.go"},
		"absolute inside":               {in: "/workspace/src/main.go", want: "src/main.go"},
		"absolute workspace itself":     {in: "/workspace", want: "."},
		"absolute workspace slash":      {in: "/workspace/", want: "."},
		"dotdot out":                    {in: "../etc/passwd", err: true},
		"dotdot only":                   {in: "..", err: true},
		"dotdot after descent":          {in: "a/../../b", err: true},
		"absolute dotdot out":           {in: "/workspace/../etc/passwd", err: true},
		"absolute elsewhere":            {in: "/etc/passwd", err: true},
		"absolute sibling prefix":       {in: "/workspace-other/x", err: true},
		"absolute prefix without slash": {in: "/workspacex", err: true},
		"root":                          {in: "/", err: true},
		"nul byte":                      {in: "a\x00b", err: true},
		"too long":                      {in: strings.Repeat("a", MaxPathBytes+1), err: true},
		"dotdot inside stays inside":    {in: "a/b/../../c", want: "c"},
		"dotdot name is a file":         {in: "..foo", want: "..foo"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := WorkspacePath(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("WorkspacePath(%q) error = %v, want error %v", tc.in, err, tc.err)
			}
			if got != tc.want {
				t.Errorf("WorkspacePath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestWorkspacePathRefusalsSayWhy(t *testing.T) {
	if _, err := WorkspacePath("../x"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("error = %v, want ErrOutsideWorkspace", err)
	}
}

func TestExecTimeout(t *testing.T) {
	cases := map[string]struct {
		in   int32
		want time.Duration
	}{
		"unset is the default": {in: 0, want: DefaultExecTimeout},
		"negative is default":  {in: -5, want: DefaultExecTimeout},
		"asked":                {in: 5, want: 5 * time.Second},
		"clamped":              {in: 100000, want: MaxExecTimeout},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ExecTimeout(tc.in); got != tc.want {
				t.Errorf("ExecTimeout(%d) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestEdit(t *testing.T) {
	cases := map[string]struct {
		content, old, repl string
		want               string
		err                string
	}{
		"one match":      {content: "a := 1\nb := 2\n", old: "b := 2", repl: "b := 3", want: "a := 1\nb := 3\n"},
		"not found":      {content: "abc", old: "x", repl: "y", err: "not found"},
		"twice":          {content: "x x", old: "x", repl: "y", err: "occurs 2 times"},
		"empty old":      {content: "abc", old: "", repl: "y", err: "empty"},
		"delete":         {content: "abc", old: "b", repl: "", want: "ac"},
		"too large":      {content: "a", old: "a", repl: strings.Repeat("z", MaxWriteBytes+1), err: "larger than"},
		"exact, no trim": {content: "a b", old: "a  b", repl: "c", err: "not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Edit(tc.content, tc.old, tc.repl)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Edit error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Edit (-want +got):\n%s", diff)
			}
		})
	}
}
