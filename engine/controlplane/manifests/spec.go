package manifests

import (
	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// Parse decodes and checks a revision's resource_spec with the control plane's validator, the
// one POST and PATCH /v2/deployments ran before the revision was created: the renderer refuses
// nothing the command accepted. Locs are under prefix.
func Parse(raw []byte, prefix ...any) (controlplane.ResourceSpec, error) {
	return controlplane.ParseResourceSpec(raw, prefix...)
}

// at extends a loc prefix.
func at(prefix []any, more ...any) []any {
	return append(append([]any{}, prefix...), more...)
}
