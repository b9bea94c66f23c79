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

package cli

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The spawn command's flags map onto the SubagentRun spec as given; --attach reads files
// into attachments named by their base name, text as utf8, anything else as base64.
func TestSpawnFlagsMapOntoTheSpec(t *testing.T) {
	dir := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	files := map[string][]byte{
		"facts.json": []byte(`{"llamas": 3}`),
		"chart.png":  png,
		"README":     []byte("plain words, ünïcödé\n"),
		"blob":       {0x00, 0x01, 0x02, 0xff},
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	at := func(name string) string { return "--attach=" + filepath.Join(dir, name) }
	cases := map[string]struct {
		args    []string
		want    sessionsv1alpha1.SubagentRunSpec
		wantErr string
	}{
		"no flags: the task alone": {want: sessionsv1alpha1.SubagentRunSpec{Task: "t"}},
		"every field flag": {
			args: []string{"--agent", "research", "--requester", "agent:main:main", "--label", "l", "--model", "m",
				"--thinking", "high", "--thread", "--mode", "session", "--sandbox", "require", "--run-timeout", "10m", "--cleanup", "delete"},
			want: sessionsv1alpha1.SubagentRunSpec{Task: "t", AgentID: "research", RequesterSessionKey: "agent:main:main", Label: "l", Model: "m",
				Thinking: "high", Thread: true, Mode: sessionsv1alpha1.ModeSession, Sandbox: sessionsv1alpha1.SandboxRequire, RunTimeoutSeconds: ptr.To[int32](600),
				Cleanup: sessionsv1alpha1.CleanupDelete},
		},
		"a bad thinking level is passed on for admission to refuse": {
			args: []string{"--thinking", "extreme"}, want: sessionsv1alpha1.SubagentRunSpec{Task: "t", Thinking: "extreme"},
		},
		"run timeout in bare seconds":   {args: []string{"--run-timeout", "90"}, want: sessionsv1alpha1.SubagentRunSpec{Task: "t", RunTimeoutSeconds: ptr.To[int32](90)}},
		"run timeout 0 means no limit":  {args: []string{"--run-timeout", "0"}, want: sessionsv1alpha1.SubagentRunSpec{Task: "t", RunTimeoutSeconds: ptr.To[int32](0)}},
		"run timeout not whole seconds": {args: []string{"--run-timeout", "1.5s"}, wantErr: "not a whole number of seconds"},
		"run timeout negative":          {args: []string{"--run-timeout", "-5"}, wantErr: "negative"},
		"run timeout not a duration":    {args: []string{"--run-timeout", "soon"}, wantErr: "want a duration"},
		"attachments, repeated, in order": {
			args: []string{at("facts.json"), at("chart.png"), at("README"), at("blob")},
			want: sessionsv1alpha1.SubagentRunSpec{Task: "t", Attachments: []sessionsv1alpha1.Attachment{
				{Name: "facts.json", Content: `{"llamas": 3}`, Encoding: sessionsv1alpha1.EncodingUTF8, MimeType: "application/json"},
				{Name: "chart.png", Content: base64.StdEncoding.EncodeToString(png), Encoding: sessionsv1alpha1.EncodingBase64, MimeType: "image/png"},
				{Name: "README", Content: "plain words, ünïcödé\n", Encoding: sessionsv1alpha1.EncodingUTF8, MimeType: "text/plain; charset=utf-8"},
				{Name: "blob", Content: "AAEC/w==", Encoding: sessionsv1alpha1.EncodingBase64, MimeType: "application/octet-stream"},
			}},
		},
		"a missing attachment": {args: []string{at("nope.txt")}, wantErr: "--attach: open "},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var f spawnFlags
			cmd := &cobra.Command{}
			f.add(cmd)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := f.spec("t")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}
