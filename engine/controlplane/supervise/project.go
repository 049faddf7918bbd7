package supervise

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// KeepEnvFlag is jetgraph serve's flag naming the variables of its environment that the
// config file's env does not override: a deployment's secrets win over its langgraph.json.
const KeepEnvFlag = "--keep-env"

// projectRun is how a built LangGraph project (ArtifactProject) runs: jetgraph serving the
// langgraph.json of the revision's own folder, its Python graphs in the revision's virtual
// environment, the deployment's secrets over the file's env. The folder is on the process that
// built it: a process of a cluster that has not got it refuses the revision with the reason
// (project revisions run where they were built).
func projectRun(spec controlplane.DeploySpec) (cfg string, args, env []string, err error) {
	const op = "deployments.deploy"
	art := spec.Artifact
	if !filepath.IsAbs(art.Dir) || art.ConfigFile == "" {
		return "", nil, nil, engine.E(engine.Op(op), engine.Invalid, "the project artifact names no folder")
	}
	cfg = filepath.Join(art.Dir, filepath.FromSlash(art.ConfigFile))
	if _, err := os.Stat(cfg); err != nil {
		return "", nil, nil, engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf(
			"revision %s: its built project %s is not on this process (built on %s): a project revision runs on the process that built it",
			spec.RevisionID, art.Dir, art.Host))
	}
	if art.Venv != "" {
		python := filepath.Join(art.Venv, "bin", "python")
		if _, err := os.Stat(python); err != nil {
			return "", nil, nil, engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf(
				"revision %s: its virtual environment %s is not on this process (built on %s)", spec.RevisionID, art.Venv, art.Host))
		}
		args = append(args, "--python", python)
		env = append(env, "VIRTUAL_ENV="+art.Venv)
	}
	if len(spec.Secrets) > 0 {
		names := make([]string, len(spec.Secrets))
		for i, s := range spec.Secrets {
			names[i] = s.Name
		}
		args = append(args, KeepEnvFlag, strings.Join(names, ","))
	}
	return cfg, args, env, nil
}
