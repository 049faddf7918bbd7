package supervise

import (
	"context"
	"io"
	"path/filepath"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// KeepEnvFlag is jetgraph serve's flag naming the variables of its environment that the
// config file's env does not override: a deployment's secrets win over its langgraph.json.
const KeepEnvFlag = "--keep-env"

// Projects makes built LangGraph projects (ArtifactProject) ready to run on this process
// (build.Builder): their folder, from the object store when this process did not build them,
// and their dependencies.
type Projects interface {
	// Project returns the revision's langgraph.json in its ready folder and the virtual
	// environment of its Python graphs ("" for none).
	Project(ctx context.Context, spec controlplane.DeploySpec, log io.Writer) (config, venv string, err error)
}

// projectRun is how a built LangGraph project runs: jetgraph serving the langgraph.json of the
// revision's own folder, its Python graphs in its virtual environment, the deployment's secrets
// over the file's env.
func (s *Supervisor) projectRun(ctx context.Context, spec controlplane.DeploySpec, log io.Writer) (cfg string, args, env []string, err error) {
	if s.Projects == nil {
		return "", nil, nil, engine.E(engine.Op("deployments.deploy"), engine.Invalid, "this jetgraph runs no LangGraph project revisions")
	}
	cfg, venv, err := s.Projects.Project(ctx, spec, log)
	if err != nil {
		return "", nil, nil, err
	}
	if venv != "" {
		args = append(args, "--python", filepath.Join(venv, "bin", "python"))
		env = append(env, "VIRTUAL_ENV="+venv)
	}
	if len(spec.Secrets) > 0 {
		names := make([]string, len(spec.Secrets))
		for i, sec := range spec.Secrets {
			names[i] = sec.Name
		}
		args = append(args, KeepEnvFlag, strings.Join(names, ","))
	}
	return cfg, args, env, nil
}
