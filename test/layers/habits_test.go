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

package layers_test

import (
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// statusWriter is the one function that writes the status of the API's objects: every
// controller hands it the object as read and as changed (controllers/ownerflow/status_write.go).
const statusWriter = "controllers/ownerflow.WriteStatus"

// TestEveryStatusWriteGoesThroughTheHelper finds every call in the module's programs and
// libraries (tests aside) that takes a client's status writer (Status()) or a subresource
// client (SubResource(name)) and fails for each one outside WriteStatus, without exception
// (the /hooks door reports its deliveries to the SessionHook controller): a status written
// in another style skips the helper's rules (one write, none when nothing changed, the
// optimistic lock, a conflict requeued without an error line).
func TestEveryStatusWriteGoesThroughTheHelper(t *testing.T) {
	var sites []string
	for _, p := range loadModule(t) {
		path := strings.TrimPrefix(p.PkgPath, module)
		forEachFunc(p, func(fn *ast.FuncDecl) {
			name := path + "." + funcName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || !takesStatusWriter(p.TypesInfo, sel) {
					return true
				}
				sites = append(sites, name)
				if name != statusWriter {
					t.Errorf("%s writes a status at %s outside %s: hand the object and its base to writeStatus",
						name, p.Fset.Position(sel.Pos()), statusWriter)
				}
				return true
			})
		})
	}
	if !slices.Contains(sites, statusWriter) {
		t.Errorf("no status write found in %s: the enumeration is broken", statusWriter)
	}
}

// takesStatusWriter: sel is a method value of a controller-runtime client that returns its
// status writer or a subresource client.
func takesStatusWriter(info *types.Info, sel *ast.SelectorExpr) bool {
	if sel.Sel.Name != "Status" && sel.Sel.Name != "SubResource" {
		return false
	}
	s := info.Selections[sel]
	if s == nil || s.Kind() == types.FieldVal {
		return false
	}
	res := s.Obj().(*types.Func).Signature().Results()
	if res.Len() != 1 {
		return false
	}
	named, ok := res.At(0).Type().(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return false
	}
	return named.Obj().Pkg().Path() == "sigs.k8s.io/controller-runtime/pkg/client" &&
		(named.Obj().Name() == "SubResourceWriter" || named.Obj().Name() == "SubResourceClient")
}

// TestMetricsAreCountedWhereDefined: no package exports a metric collector, so a metric is
// defined in the package that counts it (DEVELOPMENT.md) and no other package reaches it.
func TestMetricsAreCountedWhereDefined(t *testing.T) {
	var collector *types.Interface
	found := 0
	for _, p := range loadModule(t) {
		if collector == nil {
			collector = lookupCollector(p)
		}
	}
	if collector == nil {
		t.Fatal("prometheus.Collector not found among the module's imports")
	}
	for _, p := range loadModule(t) {
		scope := p.Types.Scope()
		for _, n := range scope.Names() {
			v, ok := scope.Lookup(n).(*types.Var)
			if !ok || !(types.Implements(v.Type(), collector) || types.Implements(types.NewPointer(v.Type()), collector)) {
				continue
			}
			found++
			if v.Exported() {
				t.Errorf("%s.%s is an exported metric: define it in the package that counts it, unexported",
					strings.TrimPrefix(p.PkgPath, module), n)
			}
		}
	}
	if found < 10 {
		t.Errorf("found %d package-level metrics; the enumeration is broken", found)
	}
}

// lookupCollector finds prometheus.Collector among p's imports (nil if p does not import it).
func lookupCollector(p *packages.Package) *types.Interface {
	for _, imp := range p.Types.Imports() {
		if imp.Path() == "github.com/prometheus/client_golang/prometheus" {
			return imp.Scope().Lookup("Collector").Type().Underlying().(*types.Interface)
		}
	}
	return nil
}

// forEachFunc calls f for each function with a body declared in p.
func forEachFunc(p *packages.Package, f func(*ast.FuncDecl)) {
	for _, file := range p.Syntax {
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				f(fn)
			}
		}
	}
}

// TestMetricsAreRegisteredByPrograms: no init function registers a collector (a metric is
// served because a program says so, not because a package was imported: kueue's
// pkg/metrics), and every package's RegisterMetrics is called from a program's main package,
// so a metric that is counted is also served.
func TestMetricsAreRegisteredByPrograms(t *testing.T) {
	defined := map[string]bool{} // package path of each RegisterMetrics
	called := map[string]bool{}  // package path of each RegisterMetrics a main package calls
	for _, p := range loadModule(t) {
		forEachFunc(p, func(fn *ast.FuncDecl) {
			if fn.Recv == nil && fn.Name.Name == "RegisterMetrics" {
				defined[p.PkgPath] = true
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				f := calledFunc(p.TypesInfo, call)
				if f == nil || f.Pkg() == nil {
					return true
				}
				if fn.Recv == nil && fn.Name.Name == "init" && registers(f) {
					t.Errorf("%s: init registers a collector (%s): register it in RegisterMetrics, called from main",
						p.Fset.Position(call.Pos()), f.Name())
				}
				if p.Name == "main" && f.Name() == "RegisterMetrics" {
					called[f.Pkg().Path()] = true
				}
				return true
			})
		})
	}
	for pkg := range defined {
		if !called[pkg] {
			t.Errorf("%s.RegisterMetrics is called from no program's main: its metrics are counted but not served",
				strings.TrimPrefix(pkg, module))
		}
	}
	if len(defined) < 5 {
		t.Errorf("found %d RegisterMetrics functions; the enumeration is broken", len(defined))
	}
}

// calledFunc is the function or method a call calls, nil for a conversion or a func value.
func calledFunc(info *types.Info, call *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		id = fun
	case *ast.SelectorExpr:
		id = fun.Sel
	default:
		return nil
	}
	f, _ := info.Uses[id].(*types.Func)
	return f
}

// registers: f registers a collector with a Prometheus registry (MustRegister, Register).
func registers(f *types.Func) bool {
	return f.Pkg().Path() == "github.com/prometheus/client_golang/prometheus" &&
		(f.Name() == "MustRegister" || f.Name() == "Register")
}
