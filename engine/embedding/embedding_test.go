package embedding_test

import (
	"context"
	"math"
	"testing"

	"github.com/jetgraph/jetgraph/engine/embedding"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestLocal: vectors are deterministic unit vectors of the configured size, and texts sharing
// words or word parts are closer than texts sharing none.
func TestLocal(t *testing.T) {
	for _, tc := range []struct {
		dims             int
		query, near, far string
		wantDims         int
		wantName         string
	}{
		{0, "hiking in the mountains", "mountain hikes", "pasta with tomato sauce", 256, "local:256"},
		{64, "piano lessons", "she plays the piano", "weekend football", 64, "local:64"},
		{512, "Italian pasta", "ITALIAN PASTA!", "quantum physics", 512, "local:512"},
	} {
		l := embedding.Local{Dims: tc.dims}
		if l.Name() != tc.wantName {
			t.Errorf("Name() = %q, want %q", l.Name(), tc.wantName)
		}
		vs, err := l.Embed(context.Background(), []string{tc.query, tc.near, tc.far, tc.query, ""})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs[:4] {
			if len(v) != tc.wantDims || math.Abs(dot(v, v)-1) > 1e-5 {
				t.Errorf("vector %d: %d dims, norm² %f", i, len(v), dot(v, v))
			}
		}
		if dot(vs[0], vs[3]) < 1-1e-6 {
			t.Errorf("the same text embedded twice differs")
		}
		if dot(vs[4], vs[4]) != 0 {
			t.Errorf("the empty text is not the zero vector")
		}
		if near, far := dot(vs[0], vs[1]), dot(vs[0], vs[2]); near <= far {
			t.Errorf("%q: near %q scores %f, not above far %q %f", tc.query, tc.near, near, tc.far, far)
		}
	}
}
