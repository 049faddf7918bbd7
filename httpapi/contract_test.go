package httpapi_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// TestMain reports, with -v, what the contract checks met (Contract.Report) and, with -v and
// JETGRAPH_CONTRACT_UNMET=1, the documented responses no test met.
func TestMain(m *testing.M) {
	code := m.Run()
	if c, err := httpapitest.Load(httpapi.OpenAPI()); err == nil && testing.Verbose() {
		fmt.Println(c.Report())
		if os.Getenv("JETGRAPH_CONTRACT_UNMET") == "1" {
			fmt.Println(strings.Join(c.Unexercised(), "\n"))
		}
	}
	os.Exit(code)
}

// TestEveryTestServerIsChecked keeps the contract whole: a test server of httpapi or of a
// package under it is started with serve or httpapitest.NewServer, whose exchanges are checked
// against the document, never with httptest.NewServer directly.
func TestEveryTestServerIsChecked(t *testing.T) {
	var direct []string
	err := filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "httpapitest") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "httptest.NewServer(") && !strings.Contains(line, `"httptest.NewServer("`) {
				direct = append(direct, fmt.Sprintf("%s:%d", path, i+1))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(direct) > 0 {
		t.Errorf("test servers started without the contract check (use serve or httpapitest.NewServer):\n\t%s",
			strings.Join(direct, "\n\t"))
	}
}

// serve starts a test server for h, closed when the test ends, whose every request and response
// is checked against the OpenAPI document: a test exchange the document does not describe fails.
func serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	return httpapitest.NewServer(t, httpapi.OpenAPI(), h)
}
