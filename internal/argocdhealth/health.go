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

// Package argocdhealth runs the Argo CD health script of config/argocd as Argo CD does
// (github.com/argoproj/argo-cd util/lua: gopher-lua with only the package, base and table
// libraries, the object as the global obj, the returned table's status and message), and
// writes the argocd-cm patch that installs it for each kind.
package argocdhealth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"
)

// Group is the API group of the kinds the script judges.
const Group = "sessions.agents.dev"

// Kinds share one script, config/argocd/health.lua: each kind's conditions follow the
// same kstatus conventions.
var Kinds = []string{"Agent", "AgentSession", "SessionPolicy", "SessionSend", "SubagentRun", "ToolApproval", "SessionSchedule", "SessionHook"}

// Health is what a script returns.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// statuses are the health codes Argo CD accepts; any other is Unknown there.
var statuses = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// Evaluate runs a health script against an object (unstructured content).
func Evaluate(script string, obj map[string]any) (Health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{lua.LoadLibName: lua.OpenPackage, lua.BaseLibName: lua.OpenBase, lua.TabLibName: lua.OpenTable} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(open), Protect: true}, lua.LString(name)); err != nil {
			return Health{}, err
		}
	}
	// Argo CD gives a script one second.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return Health{}, err
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("expect table output from Lua script, not %s", l.Get(-1).Type())
	}
	h := Health{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
	if !statuses[h.Status] {
		return Health{}, fmt.Errorf("invalid health status %q", h.Status)
	}
	return h, nil
}

// toLua converts as Argo CD's decodeValue does: maps and slices to tables, numbers to
// numbers.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetH(lua.LString(k), toLua(l, item))
		}
		return t
	}
	return lua.LNil
}

// Script reads the health script in dir (config/argocd).
func Script(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "health.lua"))
	return string(b), err
}

// ConfigMapKey is the argocd-cm key of a kind's health script.
func ConfigMapKey(kind string) string {
	return "resource.customizations.health." + Group + "_" + kind
}

// patchHeader says what the generated file is and how to use it.
const patchHeader = `# Argo CD health checks for the sessions.agents.dev kinds: merge into argocd-cm, e.g.
#   kubectl -n argocd patch configmap argocd-cm --patch-file config/argocd/argocd-cm-patch.yaml
# Generated from config/argocd/health.lua (the same script for each kind) by
#   go test ./internal/argocdhealth -run TestConfigMapPatch -update
# do not edit it by hand.
`

// ConfigMapPatch is the argocd-cm patch that installs the script for every kind.
func ConfigMapPatch(script string) ([]byte, error) {
	data := map[string]string{}
	for _, kind := range Kinds {
		data[ConfigMapKey(kind)] = script
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "argocd-cm", "namespace": "argocd",
			"labels": map[string]string{"app.kubernetes.io/part-of": "argocd"}},
		"data": data}
	b, err := yaml.Marshal(cm)
	if err != nil {
		return nil, err
	}
	return []byte(patchHeader + string(b)), nil
}
