package hosting

import (
	"reflect"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

func TestLibraryModes(t *testing.T) {
	for _, c := range []struct {
		modes []engine.StreamMode
		want  []string
	}{
		{nil, []string{"values", "updates", "custom", "messages", "tasks"}},
		{[]engine.StreamMode{}, []string{}},
		{[]engine.StreamMode{engine.StreamValues}, []string{"values"}},
		{[]engine.StreamMode{engine.StreamUpdates, engine.StreamCustom}, []string{"custom", "updates"}},
		{[]engine.StreamMode{engine.StreamDebug, engine.StreamCheckpoints}, []string{"tasks"}},
		{[]engine.StreamMode{engine.StreamMessagesTuple}, []string{"messages", "tasks", "updates", "values"}},
		{[]engine.StreamMode{engine.StreamValues, engine.StreamEvents}, []string{"values", "updates", "custom", "messages", "tasks"}},
	} {
		got := libraryModes(c.modes)
		if got == nil {
			got = []string{}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("libraryModes(%v) = %v, want %v", c.modes, got, c.want)
		}
	}
}
