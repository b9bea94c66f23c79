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
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// project is the part of kubebuilder's PROJECT file that describes the tree.
type project struct {
	Domain      string            `json:"domain"`
	Layout      []string          `json:"layout"`
	ProjectName string            `json:"projectName"`
	Repo        string            `json:"repo"`
	Resources   []projectResource `json:"resources"`
	Version     string            `json:"version"`
}

type projectResource struct {
	API struct {
		CRDVersion string `json:"crdVersion"`
		Namespaced bool   `json:"namespaced"`
	} `json:"api"`
	Controller bool   `json:"controller"`
	Domain     string `json:"domain"`
	Group      string `json:"group"`
	Kind       string `json:"kind"`
	Path       string `json:"path"`
	Version    string `json:"version"`
	Webhooks   *struct {
		Defaulting     bool   `json:"defaulting,omitempty"`
		Validation     bool   `json:"validation,omitempty"`
		WebhookVersion string `json:"webhookVersion"`
	} `json:"webhooks,omitempty"`
}

// resourceFacts is what the tree says of a kind, and what PROJECT must say of it.
type resourceFacts struct {
	Group, Version, Path   string
	Namespaced, Controller bool
	Defaulting, Validation bool
}

const apiPackage = "github.com/agent-sessions/agent-session-operator/api/v1alpha1"

// TestProjectListsEveryKind: PROJECT lists every kind of api/v1alpha1 (a type marked
// +kubebuilder:object:root, not a List), namespaced unless marked scope=Cluster, with the
// reconciler controllers/ builds For it and the mutating (defaulting) and validating
// webhooks webhook/ declares for it, and nothing else.
func TestProjectListsEveryKind(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "PROJECT"))
	if err != nil {
		t.Fatal(err)
	}
	var p project
	if err := yaml.UnmarshalStrict(raw, &p); err != nil {
		t.Fatalf("PROJECT: %v", err)
	}
	if p.Version != "3" || !slices.Equal(p.Layout, []string{"go.kubebuilder.io/v4"}) || p.Repo+"/api/v1alpha1" != apiPackage {
		t.Errorf("PROJECT: version %q, layout %v, repo %q; want 3, [go.kubebuilder.io/v4], the module", p.Version, p.Layout, p.Repo)
	}
	got := map[string]resourceFacts{}
	for _, r := range p.Resources {
		if r.Domain != p.Domain || r.API.CRDVersion != "v1" {
			t.Errorf("PROJECT: %s has domain %q and crdVersion %q; want %q and v1", r.Kind, r.Domain, r.API.CRDVersion, p.Domain)
		}
		f := resourceFacts{Group: r.Group + "." + r.Domain, Version: r.Version, Path: r.Path,
			Namespaced: r.API.Namespaced, Controller: r.Controller}
		if r.Webhooks != nil {
			f.Defaulting, f.Validation = r.Webhooks.Defaulting, r.Webhooks.Validation
		}
		got[r.Kind] = f
	}
	want := treeResources(t)
	if len(want) < 8 {
		t.Fatalf("found %d kinds in api/v1alpha1; the enumeration is broken", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PROJECT's resources against the tree (-tree +PROJECT):\n%s", diff)
	}
}

var (
	groupName = regexp.MustCompile(`\+groupName=(\S+)`)
	// webhookPath is a webhook marker's path: /mutate-<group with dashes>-<version>-<kind>.
	webhookPath = regexp.MustCompile(`\+kubebuilder:webhook:path=/(mutate|validate)-[a-z-]+-v1alpha1-([a-z]+),`)
	// reconciles is a controller built For a kind of the API.
	reconciles = regexp.MustCompile(`For\(&sessionsv1alpha1\.([A-Za-z]+)\{\}`)
)

// treeResources reads the kinds from api/v1alpha1, their reconcilers from controllers/ and
// their webhooks from webhook/.
func treeResources(t *testing.T) map[string]resourceFacts {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "api", "v1alpha1", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	group := ""
	out := map[string]resourceFacts{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if m := groupName.FindStringSubmatch(commentText(file)); m != nil {
			group = m[1]
		}
		prev := file.Name.End()
		for _, decl := range file.Decls {
			after := prev
			prev = decl.End()
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE || len(gd.Specs) != 1 {
				continue
			}
			name := gd.Specs[0].(*ast.TypeSpec).Name.Name
			doc := commentsBetween(file, after, gd.Pos())
			if !strings.Contains(doc, "+kubebuilder:object:root=true") || strings.HasSuffix(name, "List") {
				continue
			}
			out[name] = resourceFacts{Version: "v1alpha1", Path: apiPackage,
				Namespaced: !strings.Contains(doc, "scope=Cluster")}
		}
	}
	hooks := markersIn(t, filepath.Join(repoRoot, "webhook"), webhookPath)
	controllers := markersIn(t, filepath.Join(repoRoot, "controllers"), reconciles)
	for kind, f := range out {
		f.Group = group
		f.Defaulting = slices.Contains(hooks, "mutate "+strings.ToLower(kind))
		f.Validation = slices.Contains(hooks, "validate "+strings.ToLower(kind))
		f.Controller = slices.Contains(controllers, kind)
		out[kind] = f
	}
	return out
}

// rawComments is a comment group's lines as written, markers and all.
func rawComments(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range g.List {
		b.WriteString(c.Text + "\n")
	}
	return b.String()
}

// commentsBetween is the comments of f between two positions: the markers of a type may
// sit in a group of their own, a blank line above its doc comment.
func commentsBetween(f *ast.File, from, to token.Pos) string {
	var b strings.Builder
	for _, g := range f.Comments {
		if g.Pos() > from && g.End() < to {
			b.WriteString(rawComments(g))
		}
	}
	return b.String()
}

// commentText is every comment of a file (the +groupName marker sits above the package clause).
func commentText(f *ast.File) string {
	var b strings.Builder
	for _, g := range f.Comments {
		b.WriteString(rawComments(g))
	}
	return b.String()
}

// markersIn is every match of re in the non-test Go files under dir, its groups joined by a
// space.
func markersIn(t *testing.T, dir string, re *regexp.Regexp) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			out = append(out, strings.Join(m[1:], " "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
