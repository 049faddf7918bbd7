package engine

import "testing"

func TestAggregateID(t *testing.T) {
	for _, c := range []struct {
		kind, id, want string
	}{
		{"thread", "0193A2B4-0000-7000-8000-000000000000", "0193a2b4-0000-7000-8000-000000000000"},
		{"assistant", "0193a2b4-0000-7000-8000-000000000000", "0193a2b4-0000-7000-8000-000000000000"},
		{"cron", "0193A2B4-0000-7000-8000-00000000000A", "0193a2b4-0000-7000-8000-00000000000a"},
		{"cron", "*", ""},
		{"store", "0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
		{"thread", "*", ""},
		{"thread", ">", ""},
		{"thread", "a.b", ""},
		{"store", "*", ""},
		{"store", "0123456789abcdef0123456789abcde*", ""},
		{"store", "0123456789ABCDEF0123456789ABCDEF", ""},
		{"out", "0193a2b4-0000-7000-8000-000000000000", ""},
	} {
		got, err := AggregateID(c.kind, c.id)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("AggregateID(%q, %q) = %q, %v; want %q", c.kind, c.id, got, err, c.want)
		}
	}
}
