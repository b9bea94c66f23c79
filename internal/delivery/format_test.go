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

package delivery

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	cases := map[string]struct {
		format Format
		text   string
		want   []string
	}{
		"slack escapes links and mentions": {SlackFormat, "Result: <!channel> & <@U1> <https://x|y>",
			[]string{"*Result:* &lt;!channel&gt; &amp; &lt;@U1&gt; &lt;https://x|y&gt;"}},
		"slack bolds labels at line starts only": {SlackFormat, "Status: ok\nsee Status: x\nStats: 1s",
			[]string{"*Status:* ok\nsee Status: x\n*Stats:* 1s"}},
		"discord defuses mentions and markdown": {DiscordFormat, "@everyone **hi** <@123> [a](b)",
			[]string{"@\u200beveryone \\*\\*hi\\*\\* <\u200b@\u200b123\\> \\[a\\](b)"}},
		"discord bolds labels":                {DiscordFormat, "Status: ok", []string{"**Status:** ok"}},
		"telegram is plain text":              {TelegramFormat, "<b>hi</b> *x* @all", []string{"<b>hi</b> *x* @all"}},
		"control and bidi characters dropped": {WhatsAppFormat, "a\u202eb\x00c\x1b[31m\n\td", []string{"abc[31m\n\td"}},
		"empty is no message":                 {TelegramFormat, " \n ", []string{}},
		"split between lines": {Format{Limit: 30, Escape: plainRune}, "first line here\nsecond line that is long",
			[]string{"(1/3) first line here", "(2/3) second line that is", "(3/3) long"}},
		"split between words": {Format{Limit: 20, Escape: plainRune}, "aaaa bbbb cccc dddd eeee",
			[]string{"(1/3) aaaa bbbb", "(2/3) cccc dddd", "(3/3) eeee"}},
		"split anywhere in a long word": {Format{Limit: 12, Escape: plainRune}, "abcdefghij",
			[]string{"(1/3) abcd", "(2/3) efgh", "(3/3) ij"}},
		"an escape is never cut": {Format{Limit: 14, Escape: slackRune}, "<<<<",
			[]string{"(1/4) &lt;", "(2/4) &lt;", "(3/4) &lt;", "(4/4) &lt;"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.format.Render(tc.text)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Render (-want +got):\n%s", diff)
			}
		})
	}
}

// An announce longer than MaxParts messages ends in a part that says it was cut.
func TestRenderTruncatesAtMaxParts(t *testing.T) {
	parts := DiscordFormat.Render(strings.Repeat("x ", DiscordLimit*MaxParts))
	if len(parts) != MaxParts || !strings.HasSuffix(parts[MaxParts-1], truncatedNote) {
		t.Fatalf("%d parts, last ends %q", len(parts), parts[len(parts)-1][max(0, len(parts[len(parts)-1])-20):])
	}
	for i, p := range parts {
		if units(p) > DiscordLimit {
			t.Errorf("part %d has %d units", i, units(p))
		}
	}
}

// The labels' markup counts against the limit: a text of nothing but labels (a model can
// write one) splits into parts that each fit once bold.
func TestRenderBoldLabelsFit(t *testing.T) {
	for name, format := range map[string]Format{"discord": DiscordFormat, "slack": SlackFormat} {
		t.Run(name, func(t *testing.T) {
			parts := format.Render(strings.Repeat("Notes:\n", 2*format.Limit/7))
			if len(parts) < 2 {
				t.Fatalf("%d parts, want a split", len(parts))
			}
			for i, p := range parts {
				if units(p) > format.Limit {
					t.Errorf("part %d has %d units, over %d", i, units(p), format.Limit)
				}
			}
			if want := format.Bold("Notes:") + "\n"; !strings.Contains(parts[1], want) {
				t.Errorf("part 1 has no bold label %q", want)
			}
		})
	}
}

// Telegram counts UTF-16 code units: an emoji is two.
func TestRenderCountsUTF16(t *testing.T) {
	parts := TelegramFormat.Render(strings.Repeat("😀", TelegramLimit))
	for i, p := range parts {
		if units(p) > TelegramLimit {
			t.Errorf("part %d has %d units", i, units(p))
		}
	}
	if len(parts) != 3 {
		t.Errorf("%d parts, want 3", len(parts))
	}
}

// FuzzRender: whatever a model writes, every part fits its platform, there are at most
// MaxParts, nothing of it mentions anyone on Slack or Discord, and no control character
// reaches a plain-text platform.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"Status: ok\nResult: @everyone <!here>", "<@U1>", "a\u202eb", strings.Repeat("é ", 3000), "\\*_~`|>[]#",
		strings.Repeat("Status:\n", 300)} {
		f.Add(s)
	}
	formats := map[string]Format{"telegram": TelegramFormat, "discord": DiscordFormat, "whatsapp": WhatsAppFormat, "slack": SlackFormat,
		"tiny": {Limit: 40, Escape: discordRune, Bold: DiscordFormat.Bold}}
	f.Fuzz(func(t *testing.T, text string) {
		for name, format := range formats {
			parts := format.Render(text)
			if len(parts) > MaxParts {
				t.Fatalf("%s: %d parts", name, len(parts))
			}
			for _, p := range parts {
				if units(p) > format.Limit {
					t.Fatalf("%s: a part of %d units: %q", name, units(p), p)
				}
				for _, r := range p {
					if unicode.IsControl(r) && r != '\n' && r != '\t' || isBidiControl(r) {
						t.Fatalf("%s: control character %U in %q", name, r, p)
					}
				}
				switch name {
				case "slack":
					if strings.Contains(p, "<") || strings.Contains(p, ">") {
						t.Fatalf("slack: a part holds < or >: %q", p)
					}
				case "discord", "tiny":
					for _, m := range []string{"@everyone", "@here", "<@", "<#", "<!"} {
						if strings.Contains(p, m) {
							t.Fatalf("%s: a part holds %q: %q", name, m, p)
						}
					}
				}
			}
		}
	})
}
