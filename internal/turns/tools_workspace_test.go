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

package turns

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hostileWorkspace is a workspace holding attachments, large, binary and UTF-8 files, a
// FIFO, and symlinks that lead in and out, beside a file outside it.
func hostileWorkspace(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	ws := filepath.Join(top, "ws")
	write := func(name string, data []byte) {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write(".agents/attachments/u1/notes.txt", []byte("hello"))
	write("big.txt", []byte(strings.Repeat("a", 100<<10)))
	write("bin.dat", []byte{0xff, 0xfe, 0x00, 0x01})
	write("utf8.txt", []byte(strings.Repeat("é", 3)))
	write("d1/d2/d3/f.txt", []byte("deep"))
	if err := os.WriteFile(filepath.Join(top, "outside.txt"), []byte("secret"), 0o640); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link-out": "/etc", "link-up": "../outside.txt", "link-in": ".agents/attachments/u1/notes.txt",
		"d1/link-abs": filepath.Join(top, "outside.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o640); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestWorkspaceRead(t *testing.T) {
	ws := hostileWorkspace(t)
	cases := map[string]struct {
		path          string
		offset, n     int64
		want          *workspaceFile
		wantErrSubstr string
	}{
		"attachment":             {path: ".agents/attachments/u1/notes.txt", n: 100, want: &workspaceFile{Path: ".agents/attachments/u1/notes.txt", Bytes: 5, Content: "hello", Encoding: "utf8"}},
		"symlink inside":         {path: "link-in", n: 100, want: &workspaceFile{Path: "link-in", Bytes: 5, Content: "hello", Encoding: "utf8"}},
		"dot segments inside":    {path: "d1/../.agents/./attachments/u1/notes.txt", n: 3, want: &workspaceFile{Path: ".agents/attachments/u1/notes.txt", Bytes: 5, Content: "hel", Encoding: "utf8", NextOffset: 3}},
		"parent":                 {path: "../outside.txt", n: 100, wantErrSubstr: "not inside the workspace"},
		"parent after descent":   {path: "d1/../../outside.txt", n: 100, wantErrSubstr: "not inside the workspace"},
		"absolute":               {path: "/etc/passwd", n: 100, wantErrSubstr: "not inside the workspace"},
		"NUL byte":               {path: "notes\x00.txt", n: 100, wantErrSubstr: "not inside the workspace"},
		"overlong":               {path: strings.Repeat("a/", 600), n: 100, wantErrSubstr: "not inside the workspace"},
		"symlink up":             {path: "link-up", n: 100, wantErrSubstr: "leads out of the workspace"},
		"through symlink out":    {path: "link-out/passwd", n: 100, wantErrSubstr: "leads out of the workspace"},
		"absolute symlink":       {path: "d1/link-abs", n: 100, wantErrSubstr: "leads out of the workspace"},
		"fifo is not read":       {path: "fifo", n: 100, wantErrSubstr: "not a regular file"},
		"directory":              {path: "d1", n: 100, wantErrSubstr: "not a regular file"},
		"missing":                {path: "nope.txt", n: 100, wantErrSubstr: "no such file"},
		"no path":                {path: "", n: 100, wantErrSubstr: "path is required"},
		"bounded read":           {path: "big.txt", n: 4, want: &workspaceFile{Path: "big.txt", Bytes: 100 << 10, Content: "aaaa", Encoding: "utf8", NextOffset: 4}},
		"offset near the end":    {path: "big.txt", offset: 100<<10 - 2, n: 10, want: &workspaceFile{Path: "big.txt", Bytes: 100 << 10, Offset: 100<<10 - 2, Content: "aa", Encoding: "utf8"}},
		"offset past the end":    {path: "big.txt", offset: 1 << 30, n: 10, want: &workspaceFile{Path: "big.txt", Bytes: 100 << 10, Offset: 1 << 30, Encoding: "utf8"}},
		"binary is base64":       {path: "bin.dat", n: 100, want: &workspaceFile{Path: "bin.dat", Bytes: 4, Content: base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0x00, 0x01}), Encoding: "base64"}},
		"rune cut left for next": {path: "utf8.txt", n: 3, want: &workspaceFile{Path: "utf8.txt", Bytes: 6, Content: "é", Encoding: "utf8", NextOffset: 2}},
	}
	for name, c := range cases {
		got, err := readWorkspace(ws, c.path, c.offset, c.n)
		if c.wantErrSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSubstr) {
				t.Errorf("%s: err = %v, want it to say %q (result %+v)", name, err, c.wantErrSubstr, got)
			}
			if err != nil && strings.Contains(err.Error(), ws) {
				t.Errorf("%s: error %q reveals the host path", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

func TestWorkspaceList(t *testing.T) {
	ws := hostileWorkspace(t)
	cases := map[string]struct {
		path          string
		depth         int
		want          []workspaceEntry
		wantErrSubstr string
	}{
		"top level": {path: "", depth: 1, want: []workspaceEntry{
			{Path: ".agents", Type: "dir"}, {Path: "big.txt", Type: "file", Bytes: 100 << 10}, {Path: "bin.dat", Type: "file", Bytes: 4},
			{Path: "d1", Type: "dir"}, {Path: "fifo", Type: "other"}, {Path: "link-in", Type: "symlink"},
			{Path: "link-out", Type: "symlink"}, {Path: "link-up", Type: "symlink"}, {Path: "utf8.txt", Type: "file", Bytes: 6},
		}},
		"attachments": {path: ".agents", depth: 4, want: []workspaceEntry{
			{Path: ".agents/attachments", Type: "dir"}, {Path: ".agents/attachments/u1", Type: "dir"},
			{Path: ".agents/attachments/u1/notes.txt", Type: "file", Bytes: 5},
		}},
		"depth bound": {path: "d1", depth: 2, want: []workspaceEntry{
			{Path: "d1/d2", Type: "dir"}, {Path: "d1/d2/d3", Type: "dir"}, {Path: "d1/link-abs", Type: "symlink"},
		}},
		"parent":      {path: "..", depth: 1, wantErrSubstr: "not inside the workspace"},
		"absolute":    {path: "/etc", depth: 1, wantErrSubstr: "not inside the workspace"},
		"symlink out": {path: "link-out", depth: 1, wantErrSubstr: "leads out of the workspace"},
		"a file":      {path: "big.txt", depth: 1, wantErrSubstr: "not a directory"},
		"missing":     {path: "nope", depth: 1, wantErrSubstr: "no such file"},
	}
	for name, c := range cases {
		got, err := listWorkspace(ws, c.path, c.depth)
		if c.wantErrSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSubstr) {
				t.Errorf("%s: err = %v, want it to say %q", name, err, c.wantErrSubstr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d := cmp.Diff(c.want, got.Entries); d != "" || got.Truncated {
			t.Errorf("%s (-want +got, truncated %v):\n%s", name, got.Truncated, d)
		}
	}
}

func TestWorkspaceListBounds(t *testing.T) {
	ws := t.TempDir()
	for i := range maxWorkspaceEntries + 10 {
		if err := os.WriteFile(filepath.Join(ws, "f"+strconv.Itoa(i)), nil, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	got, err := listWorkspace(ws, ".", 1)
	if err != nil || len(got.Entries) != maxWorkspaceEntries || !got.Truncated {
		t.Errorf("listing of %d files: %d entries, truncated %v, err %v", maxWorkspaceEntries+10, len(got.Entries), got.Truncated, err)
	}
	// A workspace nothing was written to yet is empty, not an error.
	got, err = listWorkspace(filepath.Join(ws, "never-created"), "", 1)
	if err != nil || len(got.Entries) != 0 {
		t.Errorf("missing workspace: %+v, %v", got, err)
	}
}
