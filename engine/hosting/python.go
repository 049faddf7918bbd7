package hosting

import (
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jetgraph/jetgraph/engine/graphs"
)

// pythonHostFS is the Python host, which ships in the binary: jetgraph_host.py (the program)
// and the modules beside it that it imports.
//
//go:embed python/*.py
var pythonHostFS embed.FS

// pythonHostMain is the file the host is started as.
const pythonHostMain = "jetgraph_host.py"

// PythonHostFile writes the Python host into cacheDir (once per version of its source: the
// folder is named by the hash of every file) and returns the path of its program: users install
// nothing for jetgraph, the host comes with the binary.
func PythonHostFile(cacheDir string) (string, error) {
	files, err := pythonHostFiles()
	if err != nil {
		return "", fmt.Errorf("hosting: write the python host: %w", err)
	}
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.name, len(f.data))
		h.Write(f.data)
	}
	dir := filepath.Join(cacheDir, "hosts", "python-"+hex.EncodeToString(h.Sum(nil)[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("hosting: write the python host: %w", err)
	}
	for _, f := range files {
		if err := writeIfChanged(filepath.Join(dir, f.name), f.data); err != nil {
			return "", fmt.Errorf("hosting: write the python host: %w", err)
		}
	}
	return filepath.Join(dir, pythonHostMain), nil
}

type hostFile struct {
	name string
	data []byte
}

// pythonHostFiles are the host's files in name order.
func pythonHostFiles() ([]hostFile, error) {
	entries, err := pythonHostFS.ReadDir("python")
	if err != nil {
		return nil, err
	}
	var files []hostFile
	for _, e := range entries { // ReadDir sorts by name
		b, err := pythonHostFS.ReadFile("python/" + e.Name())
		if err != nil {
			return nil, err
		}
		files = append(files, hostFile{e.Name(), b})
	}
	return files, nil
}

// FindPython returns the Python that runs the user's graphs, as users expect it found: the
// given one (a flag), the active virtual environment's (VIRTUAL_ENV), a .venv beside the config
// file, else python3 on PATH.
func FindPython(given, configDir string, getenv func(string) string) (string, error) {
	if given != "" {
		return exec.LookPath(given)
	}
	candidates := []string{}
	if venv := getenv("VIRTUAL_ENV"); venv != "" {
		candidates = append(candidates, filepath.Join(venv, "bin", "python"))
	}
	candidates = append(candidates, filepath.Join(configDir, ".venv", "bin", "python"))
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			return c, nil
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", errors.New("no Python found: activate the project's virtual environment, make a .venv beside the config file, or name one with --python")
	}
	return p, nil
}

// Options say where hosts come from.
type Options struct {
	// Python is the interpreter (--python); "" finds one (FindPython).
	Python string
	// Node is the Node of TypeScript graphs (--node); "" is node on PATH.
	Node string
	// PoolSize is how many host processes serve each language's graphs (--hosts); 0 is 1.
	PoolSize int
	// CacheDir is where the host's source is written; "" is the user's cache folder.
	CacheDir string
	// Tracing, when set, sends the hosted graphs' model calls (and whatever else LangChain and
	// langsmith trace in a run) into the run's trace in jetgraph, unless the user configured
	// LangSmith tracing themselves (userTracingVars), in jetgraph's environment or the config
	// file's env: then the hosts trace as those settings say, as the reference servers do.
	Tracing *Tracing
	Logger  *slog.Logger
}

// Attach starts a host for the hosted graphs of reg (one per language and project folder) and
// makes reg run them there. It returns the hosts (for health and Close); none when reg has no
// hosted graph.
func Attach(reg *graphs.Registry, o Options) ([]*Host, error) {
	hosts, _, err := AttachApp(reg, nil, o)
	return hosts, err
}

// AttachApp is Attach, with the project's custom routes (langgraph.json's http.app) loaded by
// the host of their language and project, started for them when no graph needs it. The App is
// nil when app is.
func AttachApp(reg *graphs.Registry, app *graphs.Code, o Options) ([]*Host, *App, error) {
	hosts, served, _, err := AttachProject(reg, app, nil, o)
	return hosts, served, err
}

// AttachProject is AttachApp, with the user's auth handler (langgraph.json's auth) loaded by
// the host of its language and project, started for it when no graph or app needs it. The Auth is
// nil when auth is.
func AttachProject(reg *graphs.Registry, app *graphs.Code, auth *graphs.AuthConfig, o Options) ([]*Host, *App, *Auth, error) {
	type key struct{ language, root string }
	groups := map[key][]graphs.Entry{}
	var order []key
	for _, e := range reg.Hosted() {
		k := key{e.Code.Language, e.Code.Root}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	var appKey, authKey key
	if app != nil {
		appKey = key{app.Language, app.Root}
		if _, ok := groups[appKey]; !ok {
			order = append(order, appKey)
		}
	}
	if auth != nil {
		authKey = key{auth.Path.Language, auth.Path.Root}
		if _, ok := groups[authKey]; !ok && (app == nil || authKey != appKey) {
			order = append(order, authKey)
		}
	}
	var hosts []*Host
	var served *App
	var servedAuth *Auth
	for _, k := range order {
		var kApp, kAuth *graphs.Code
		if app != nil && k == appKey {
			kApp = app
		}
		if auth != nil && k == authKey {
			kAuth = auth.Path
		}
		cmd, err := hostCommand(k.language, k.root, groups[k], kApp, kAuth, o)
		if err != nil {
			for _, h := range hosts {
				h.Close()
			}
			return nil, nil, nil, err
		}
		var ids []string
		for _, e := range groups[k] {
			ids = append(ids, e.ID)
		}
		size := max(o.PoolSize, 1)
		pool := &Pool{}
		configEnv := projectCode(groups[k], cmp.Or(kApp, kAuth)).Env
		if o.Tracing != nil {
			if name := userTracing(configEnv, os.Getenv); name != "" {
				logger(o).Info("hosted graphs trace as your LangSmith settings say, not into jetgraph's /tracing",
					"host", k.language, "graphs", strings.Join(ids, ","), "variable", name)
			} else {
				pool.traced = true
			}
		}
		for range size {
			extra := maps.Clone(configEnv) // the config file's env, over jetgraph's
			if extra == nil {
				extra = map[string]string{}
			}
			extra["PYTHONUNBUFFERED"] = "1"
			if pool.traced {
				o.Tracing.tracingEnv(extra, k.language)
			}
			h := Start(Config{Language: k.language, Command: cmd, Dir: k.root, Graphs: ids, Logger: o.Logger, Env: env(extra)})
			pool.hosts = append(pool.hosts, h)
			hosts = append(hosts, h)
		}
		for _, id := range ids {
			if err := reg.Host(id, pool.Factory(id)); err != nil {
				return nil, nil, nil, err
			}
		}
		if kApp != nil {
			served = &App{pool: pool, spec: kApp.Spec()}
		}
		if kAuth != nil {
			servedAuth = &Auth{pool: pool, spec: kAuth.Spec(), cache: newAuthCache(auth.Cache)}
		}
	}
	return hosts, served, servedAuth, nil
}

func logger(o Options) *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// hostCommand is the command that starts the host of a language for entries of one project.
func hostCommand(language, root string, entries []graphs.Entry, app, auth *graphs.Code, o Options) ([]string, error) {
	deps := projectCode(entries, cmp.Or(app, auth)).Dependencies
	switch language {
	case graphs.LanguagePython:
		cache := o.CacheDir
		if cache == "" {
			dir, err := os.UserCacheDir()
			if err != nil {
				return nil, fmt.Errorf("hosting: no cache folder for the hosts: %w", err)
			}
			cache = filepath.Join(dir, "jetgraph")
		}
		script, err := PythonHostFile(cache)
		if err != nil {
			return nil, err
		}
		python, err := FindPython(o.Python, root, os.Getenv)
		if err != nil {
			return nil, err
		}
		cmd := []string{python, "-u", script, "--root", root}
		for _, dep := range deps {
			cmd = append(cmd, "--path", dep)
		}
		for _, e := range entries {
			cmd = append(cmd, "--graph", e.ID+"="+e.Code.Spec())
		}
		if app != nil {
			cmd = append(cmd, "--app", app.Spec())
		}
		if auth != nil {
			cmd = append(cmd, "--auth", auth.Spec())
		}
		return cmd, nil
	case graphs.LanguageTypeScript:
		node, err := FindNode(o.Node)
		if err != nil {
			return nil, err
		}
		return typescriptCommand(node, root, entries, app, auth, deps)
	}
	return nil, fmt.Errorf("hosting: no host for %s graphs", language)
}
