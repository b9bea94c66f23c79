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
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// modelGate is the one function allowed to call a model provider: the turn engine's
// budget gate, which judges every call before it is made and charges what it received.
const modelGate = "internal/turns.(*turn).callModel"

// TestEveryModelCallIsJudged enumerates every place in the module's programs and libraries
// (tests aside) that calls a model provider's Complete, or takes it as a value, and fails
// for each one outside the budget gate: a call there would reach a priced model without
// being judged against the budgets or charged to them. internal/provider itself (its
// retrying and streaming wrappers) is below the gate.
func TestEveryModelCallIsJudged(t *testing.T) {
	pkgs := loadModule(t)
	var iface *types.Interface
	for _, p := range pkgs {
		if p.PkgPath == module+"internal/provider" {
			iface = p.Types.Scope().Lookup("Provider").Type().Underlying().(*types.Interface)
		}
	}
	if iface == nil {
		t.Fatal("internal/provider.Provider not found")
	}
	var sites []string
	for _, p := range pkgs {
		path := strings.TrimPrefix(p.PkgPath, module)
		if path == "internal/provider" || strings.HasPrefix(path, "internal/provider/") {
			continue
		}
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				name := path + "." + funcName(fn)
				if wrapsProvider(p.TypesInfo, fn, iface) {
					continue // a provider wrapping another (a test's recorder) is below the gate too
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "Complete" {
						return true
					}
					s := p.TypesInfo.Selections[sel]
					if s == nil || s.Kind() == types.FieldVal || !isProvider(s.Recv(), iface) {
						return true
					}
					sites = append(sites, name)
					if name != modelGate {
						t.Errorf("%s calls a model provider at %s outside the budget gate %s: call t.callModel instead",
							name, p.Fset.Position(sel.Pos()), modelGate)
					}
					return true
				})
			}
		}
	}
	if len(sites) == 0 {
		t.Errorf("no model call found at all: the enumeration is broken (want one, in %s)", modelGate)
	}
}

// loaded is the module's packages (tests aside) with their syntax and types, loaded once
// for the tests that walk them.
var loaded struct {
	once sync.Once
	pkgs []*packages.Package
	err  error
}

// loadModule loads the module's packages once and fails for any that did not load.
func loadModule(t *testing.T) []*packages.Package {
	t.Helper()
	loaded.once.Do(func() {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax, Dir: "../.."}
		loaded.pkgs, loaded.err = packages.Load(cfg, module+"...")
	})
	if loaded.err != nil {
		t.Fatal(loaded.err)
	}
	for _, p := range loaded.pkgs {
		for _, e := range p.Errors {
			t.Errorf("loading %s: %v", p.PkgPath, e)
		}
	}
	return loaded.pkgs
}

// wrapsProvider: fn is the Complete method of a model provider (one that wraps another).
func wrapsProvider(info *types.Info, fn *ast.FuncDecl, iface *types.Interface) bool {
	if fn.Recv == nil || fn.Name.Name != "Complete" {
		return false
	}
	f, ok := info.Defs[fn.Name].(*types.Func)
	return ok && isProvider(f.Signature().Recv().Type(), iface)
}

// isProvider: a value of type t (or a pointer to it) is a model provider.
func isProvider(t types.Type, iface *types.Interface) bool {
	return types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface)
}

// funcName is a declared function's name, with its receiver: (*turn).callModel.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if ix, ok := recv.(*ast.IndexExpr); ok {
		recv = ix.X
	}
	switch r := recv.(type) {
	case *ast.StarExpr:
		x := r.X
		if ix, ok := x.(*ast.IndexExpr); ok {
			x = ix.X // a generic type's method: (*stepRunner).Reconcile
		}
		if id, ok := x.(*ast.Ident); ok {
			return "(*" + id.Name + ")." + fn.Name.Name
		}
	case *ast.Ident:
		return "(" + r.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
