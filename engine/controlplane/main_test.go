package controlplane_test

import (
	"os"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
)

// TestMain removes the jetgraph binary the tests built (cptest.Main).
func TestMain(m *testing.M) { os.Exit(cptest.Main(m)) }
