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

package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mdLink matches an inline Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// codeSpan is an inline code span; its text is not Markdown.
var codeSpan = regexp.MustCompile("`[^`\n]*`")

// prose is md without its fenced blocks and code spans.
func prose(md string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(codeSpan.ReplaceAllString(line, "") + "\n")
		}
	}
	return b.String()
}

// relativeLinks returns the targets of a page's links that are relative paths (no scheme,
// no bare #anchor), #anchor included, in order; code is not searched.
func relativeLinks(md string) []string {
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(prose(md), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		out = append(out, target)
	}
	return out
}

// notInSlug are the characters GitHub drops from a heading to make its anchor.
var notInSlug = regexp.MustCompile(`[^a-z0-9 _-]`)

// anchors are the anchors of a page's headings, as GitHub makes them.
func anchors(md string) []string {
	var out []string
	for _, line := range strings.Split(prose(md), "\n") {
		if strings.HasPrefix(line, "#") {
			h := strings.TrimSpace(strings.TrimLeft(line, "#"))
			out = append(out, strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(h), ""), " ", "-"))
		}
	}
	return out
}

func TestRelativeLinks(t *testing.T) {
	md := "See [a](concepts/a.md), [b](../DEVELOPMENT.md#layout), [c](#top), [d](https://x.example/y.md) and `[e](f)`.\n```\n[g](h)\n```\n[i](j.md)\n"
	want := []string{"concepts/a.md", "../DEVELOPMENT.md#layout", "j.md"}
	if diff := cmp.Diff(want, relativeLinks(md)); diff != "" {
		t.Errorf("relativeLinks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gitops-flux-and-argo-cd", "mcp-servers-the-manager-calls"},
		anchors("## GitOps: Flux and Argo CD\n```\n# not a heading\n```\n### MCP servers the manager calls\n")); diff != "" {
		t.Errorf("anchors (-want +got):\n%s", diff)
	}
}

// pages are the guide's Markdown files, relative to the repository root.
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md", "DEVELOPMENT.md", "CONTRIBUTING.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, rerr := filepath.Rel(repoRoot, path)
			out = append(out, filepath.ToSlash(rel))
			return rerr
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLinksResolve: every relative link of README, DEVELOPMENT, CONTRIBUTING and docs/
// points at a file or directory of the tree, and at a heading of it when it names an
// anchor, so a moved page or a renamed section cannot leave a dead link.
func TestLinksResolve(t *testing.T) {
	for _, page := range pages(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, link := range relativeLinks(string(b)) {
			target, anchor, _ := strings.Cut(link, "#")
			rel := filepath.ToSlash(filepath.Join(filepath.Dir(page), target))
			if _, err := os.Stat(filepath.Join(repoRoot, rel)); err != nil {
				t.Errorf("%s links %s, which does not exist (%s)", page, link, rel)
				continue
			}
			if anchor == "" || !strings.HasSuffix(rel, ".md") {
				continue
			}
			linked, err := os.ReadFile(filepath.Join(repoRoot, rel))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(anchors(string(linked)), anchor) {
				t.Errorf("%s links %s, but %s has no heading with the anchor #%s", page, link, rel, anchor)
			}
		}
	}
}

// TestDocsShape: the guide has the pages a newcomer looks for, in the sigs projects' shape.
func TestDocsShape(t *testing.T) {
	for _, p := range []string{
		"DEVELOPMENT.md", "CONTRIBUTING.md", "docs/getting-started.md", "docs/architecture.md",
		"docs/concepts/sessions-and-keys.md", "docs/concepts/sends-and-ping-pong.md", "docs/concepts/runs-and-announces.md",
		"docs/concepts/policy-and-visibility.md", "docs/concepts/approvals.md", "docs/concepts/compaction.md", "docs/concepts/search.md", "docs/concepts/memory.md",
		"docs/tasks/connect-a-model.md", "docs/tasks/mcp-tools.md", "docs/tasks/require-approval.md", "docs/tasks/set-a-budget.md", "docs/tasks/shard.md", "docs/tasks/give-an-agent-memory.md",
		"docs/reference/api.md", "docs/reference/http-history.md", "docs/reference/http-search.md", "docs/reference/mcp.md",
		"docs/reference/metrics.md", "docs/reference/flags-and-values.md",
		"docs/operations/install.md", "docs/operations/upgrade.md", "docs/operations/scaling.md", "docs/operations/security.md",
		"docs/operations/troubleshooting.md",
	} {
		if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
			t.Errorf("the guide has no %s: %v", p, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 200 {
		t.Errorf("README.md has %d lines; it says what the operator is, the set-up, a short tour, install and links, in 200 at most", n)
	}
}
