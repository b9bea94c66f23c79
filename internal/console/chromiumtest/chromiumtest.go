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

// Package chromiumtest starts real headless Chromium (Debian's chromium, installed with
// apt-get when it is missing and the test runs as root) for the console's tests, and
// writes their screenshots.
package chromiumtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/chromedp/chromedp"
)

// T is what the package needs of a test: *testing.T and GinkgoT() both are one.
type T interface {
	Helper()
	Logf(format string, args ...any)
	Fatal(args ...any)
	Skip(args ...any)
	Cleanup(func())
}

// Path finds chromium, installing Debian's package when it is missing and we may; without
// it the test is skipped, or fails in CI.
func Path(t T) string {
	t.Helper()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getuid() == 0 {
		cmd := exec.Command("apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "--no-install-recommends", "chromium")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("apt-get install chromium: %v\n%s", err, out)
		}
		if p, err := exec.LookPath("chromium"); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is missing and could not be installed")
	}
	t.Skip("chromium is missing (apt-get install chromium)")
	return ""
}

// Start runs headless Chromium for the rest of the test and returns a browser context.
// Extra options (e.g. trusting a test's self-signed certificate) are added to the defaults.
func Start(t T, ctx context.Context, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bin := Path(t)
	// Chromium may still write its profile as it exits; its removal is best effort.
	profile, err := os.MkdirTemp("", "console-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 800))
	actx, acancel := chromedp.NewExecAllocator(ctx, append(opts, extra...)...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel() })
	return bctx
}

// Shot writes a full-page screenshot to dir/name.
func Shot(dir, name string) chromedp.ActionFunc {
	return func(ctx context.Context) error {
		var buf []byte
		if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), buf, 0o644)
	}
}
