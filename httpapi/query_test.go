package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
)

// TestQueryFieldsStrings: a query value is a string field's whole text even where it reads as
// JSON (a hex suffix such as 8088e062 is a number in JSON's eyes), while numbers and lists still
// read as such where a field wants them.
func TestQueryFieldsStrings(t *testing.T) {
	for _, c := range []struct {
		query, name, want string
		enum              bool
	}{
		{"name_contains=8088e062", "name_contains", "8088e062", false},
		{"name=123", "name", "123", false},
		{"name=true", "name", "true", false},
		{"name=%22quoted%22", "name", `"quoted"`, false}, // as sent, quotes and all
		{"name=plain", "name", "plain", false},
		{"sort_order=1", "sort_order", "1", true},
	} {
		e := echo.New()
		ctx := e.NewContext(httptest.NewRequest("GET", "/x?"+c.query, nil), httptest.NewRecorder())
		var errs engine.Violations
		f := QueryFields(ctx, &errs)
		var got string
		if c.enum {
			got = f.Enum(c.name, "", "1", "2")
		} else {
			got = f.String(c.name)
		}
		if got != c.want || len(errs) != 0 {
			t.Errorf("%s: %s = %q (%v), want %q", c.query, c.name, got, errs, c.want)
		}
	}
	// Numbers still read as numbers, and a list of values is no string.
	e := echo.New()
	ctx := e.NewContext(httptest.NewRequest("GET", "/x?limit=10&name=a&name=b", nil), httptest.NewRecorder())
	var errs engine.Violations
	f := QueryFields(ctx, &errs)
	var limit int
	if !f.decode("limit", &limit) || limit != 10 {
		t.Errorf("limit = %d, want 10", limit)
	}
	if f.String("name"); len(errs) != 1 {
		t.Errorf("a repeated value as a string field: %v, want one string_type problem", errs)
	}
}
