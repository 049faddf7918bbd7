package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestReadme checks what can be checked mechanically of the README a newcomer reads on GitHub:
// every code fence is closed (an open one turns the sections after it into code), every
// internal link (#anchor) names a heading, and no table has two rows for the same thing.
func TestReadme(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := parseReadme(string(raw))
	for _, p := range doc.problems {
		t.Error(p)
	}
	for _, l := range doc.links {
		if !doc.anchors[l.anchor] {
			t.Errorf("line %d: the link #%s names no heading", l.line, l.anchor)
		}
	}
	// The example projects the README walks through are where its steps go (the scenarios
	// TestExample*Agent serve them and run its curl steps).
	examples := regexp.MustCompile(`(?m)^cd (scenarios/examples/[\w-]+)$`).FindAllStringSubmatch(string(raw), -1)
	if len(examples) < 2 {
		t.Errorf("the README walks through %d example projects, want the Python and the TypeScript one", len(examples))
	}
	for _, m := range examples {
		for _, f := range []string{"langgraph.json", "README.md"} {
			if _, err := os.Stat(filepath.Join("..", "..", m[1], f)); err != nil {
				t.Errorf("the README's `cd %s`: %v", m[1], err)
			}
		}
	}
}

// TestReadmeChecks holds parseReadme to what TestReadme relies on, on small documents.
func TestReadmeChecks(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		problems  int
		anchors   []string
	}{
		{"closed fences", "# A\n```sh\nx\n```\n## B c\n", 0, []string{"a", "b-c"}},
		{"a fence never closed", "# A\n```sh\nx\n## B\n", 1, []string{"a"}},
		{"a fence opened inside a fence", "```js\nx\n```sh\ny\n```\n", 1, nil},
		{"a longer fence holds a shorter one", "````md\n```sh\n```\n````\n", 0, nil},
		{"headings in code are not headings", "```\n# not\n```\n# Yes\n", 0, []string{"yes"}},
		{"GitHub's slugs", "## A2A (Agent2Agent)\n## Deployments (control plane)\n## `go test`, fast!\n## A2A (Agent2Agent)\n",
			0, []string{"a2a-agent2agent", "deployments-control-plane", "go-test-fast", "a2a-agent2agent-1"}},
		{"the same row twice", "| K | V |\n|---|---|\n| `engine/` | a |\n| `engine/` | b |\n", 1, nil},
		{"the same key in two tables", "| K | V |\n|---|---|\n| a | 1 |\n\n| K | V |\n|---|---|\n| a | 2 |\n", 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := parseReadme(c.doc)
			if len(d.problems) != c.problems {
				t.Errorf("problems %q, want %d", d.problems, c.problems)
			}
			for _, a := range c.anchors {
				if !d.anchors[a] {
					t.Errorf("no anchor %q in %v", a, d.anchors)
				}
			}
		})
	}
	d := parseReadme("See [A2A](#a2a-agent2agent) and `[x](#in-code)`.\n```\n[y](#in-a-block)\n```\n")
	if len(d.links) != 1 || d.links[0].anchor != "a2a-agent2agent" {
		t.Errorf("links %v, want the one outside code", d.links)
	}
}

// readme is what TestReadme checks of a Markdown document.
type readme struct {
	anchors  map[string]bool
	links    []link
	problems []string
}

// link is an internal link: [text](#anchor) on a line.
type link struct {
	line   int
	anchor string
}

var (
	fenceLine  = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
	headingRe  = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	anchorLink = regexp.MustCompile(`\]\(#([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`+[^`]*`+")
)

// parseReadme reads doc line by line as GitHub renders it: code fences, headings (and the
// anchors GitHub makes of them), internal links and table rows.
func parseReadme(doc string) readme {
	r := readme{anchors: map[string]bool{}}
	seen := map[string]int{} // slugs so far, for GitHub's -1, -2 suffixes
	fence, fenceStart := "", 0
	rows := map[string]int{} // the current table's first cells, by line
	for i, line := range strings.Split(doc, "\n") {
		n := i + 1
		if m := fenceLine.FindStringSubmatch(line); m != nil {
			marker, info := m[1], strings.TrimSpace(m[2])
			switch {
			case fence == "":
				fence, fenceStart = marker, n
			case marker[0] == fence[0] && len(marker) >= len(fence) && info == "":
				fence = ""
			case info != "" && len(marker) >= len(fence):
				r.problems = append(r.problems, lineProblem(n, "a fence opens inside the fence of line %d: that one is never closed", fenceStart))
				fence, fenceStart = marker, n
			}
			continue
		}
		if fence != "" {
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			slug := githubSlug(m[2])
			if k := seen[slug]; k > 0 {
				r.anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				r.anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range anchorLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			r.links = append(r.links, link{n, m[1]})
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		switch {
		case !strings.HasPrefix(strings.TrimSpace(line), "|"):
			rows = map[string]int{} // a table ends at the first line that is not a row
		case strings.Trim(strings.TrimSpace(line), "|-: ") == "":
			// the delimiter row
		default:
			key := strings.TrimSpace(cells[0])
			if first, dup := rows[key]; dup {
				r.problems = append(r.problems, lineProblem(n, "a second table row for %s (the first is on line %d)", key, first))
			} else {
				rows[key] = n
			}
		}
	}
	if fence != "" {
		r.problems = append(r.problems, lineProblem(fenceStart, "the fence opened here is never closed"))
	}
	return r
}

// githubSlug is the anchor GitHub gives a heading: its text (without Markdown's code marks and
// links' targets) in lower case, spaces as hyphens, without the punctuation but - and _.
func githubSlug(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lineProblem is a problem found on a line.
func lineProblem(line int, format string, args ...any) string {
	return fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)
}
