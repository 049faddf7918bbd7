package hosting

import (
	"crypto/sha256"
	"embed" // the TypeScript host ships in the binary
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/jetgraph/jetgraph/engine/graphs"
)

// typescriptSources are the TypeScript host's modules: host.ts, the program, and the modules it
// imports by relative path (tracer.ts, imported as ./tracer.js), bundled into one file by compileHost.
//
//go:embed typescript/*.ts
var typescriptSources embed.FS

// hostNamespace is the esbuild namespace of the host's embedded modules.
const hostNamespace = "jetgraph-host"

// compileHost compiles the TypeScript host, its modules bundled in and packages left as imports
// of the project's node_modules, into one ES module for Node.
func compileHost() ([]byte, error) {
	main, err := typescriptSources.ReadFile("typescript/host.ts")
	if err != nil {
		return nil, fmt.Errorf("hosting: %w", err)
	}
	embedded := api.Plugin{Name: hostNamespace, Setup: func(b api.PluginBuild) {
		// A relative import is one of the host's modules; any other, a package of the project's
		// (or Node's), imported at run time.
		b.OnResolve(api.OnResolveOptions{Filter: `.*`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			if name, ok := strings.CutPrefix(a.Path, "./"); ok { // "./tracer.js", as Node's ESM spells tracer.ts
				return api.OnResolveResult{Path: strings.TrimSuffix(name, ".js") + ".ts", Namespace: hostNamespace}, nil
			}
			return api.OnResolveResult{Path: a.Path, External: true}, nil
		})
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: hostNamespace}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			src, err := typescriptSources.ReadFile("typescript/" + a.Path)
			if err != nil {
				return api.OnLoadResult{}, err
			}
			text := string(src)
			return api.OnLoadResult{Contents: &text, Loader: api.LoaderTS}, nil
		})
	}}
	res := api.Build(api.BuildOptions{
		Stdin:  &api.StdinOptions{Contents: string(main), Sourcefile: "jetgraph-host.ts", Loader: api.LoaderTS},
		Bundle: true, Packages: api.PackagesExternal, Platform: api.PlatformNode, Format: api.FormatESModule,
		Target: api.ES2022, Write: false, LogLevel: api.LogLevelSilent, Plugins: []api.Plugin{embedded},
	})
	if len(res.Errors) > 0 {
		return nil, fmt.Errorf("hosting: compile the TypeScript host: %s", res.Errors[0].Text)
	}
	return res.OutputFiles[0].Contents, nil
}

// typescriptHTTP is the host's driver of custom routes (http.app), imported only with an app.
//
//go:embed typescript/http.ts
var typescriptHTTP string

// typescriptAuth is the host's driver of the user's auth handler (auth.path), imported only with one.
//
//go:embed typescript/auth.ts
var typescriptAuth string

// nodeCache is where, inside the project, the compiled host and the bundled graphs go: under
// its node_modules, so that they import the project's own packages (Node resolves bare imports
// from the importing file's folder upwards), in the folder tools keep their caches in.
func nodeCache(root string) string { return filepath.Join(root, "node_modules", ".cache", "jetgraph") }

// typescriptCommand compiles the host and bundles the graphs of entries (one project, root) for
// Node: the user's TypeScript and local imports are bundled by esbuild, their packages stay
// imports of the project's node_modules. It returns the command that starts the host.
func typescriptCommand(node, configDir string, entries []graphs.Entry, app, auth *graphs.Code, deps []string) ([]string, error) {
	root, err := nodeProject(configDir, deps)
	if err != nil {
		return nil, err
	}
	dir := nodeCache(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("hosting: %w", err)
	}
	host, err := compileHost()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(host)
	hostFile := filepath.Join(dir, "host-"+hex.EncodeToString(sum[:6])+".mjs")
	if err := writeIfChanged(hostFile, host); err != nil {
		return nil, err
	}
	cmd := []string{node, hostFile, "--root", root}
	for _, e := range entries {
		out := filepath.Join(dir, "graphs", e.ID+".mjs")
		if err := bundleTS(root, e.Code.Path, out); err != nil {
			return nil, fmt.Errorf("graph %s: %w", e.ID, err)
		}
		cmd = append(cmd, "--graph", e.ID+"="+out+":"+e.Code.Attr)
	}
	for _, d := range []struct {
		code                    *graphs.Code
		name, source, key, flag string
	}{
		{app, "http", typescriptHTTP, "http.app", "--app"},
		{auth, "auth", typescriptAuth, "auth.path", "--auth"},
	} {
		if d.code == nil {
			continue
		}
		driver, err := compileTS(dir, d.name, d.source)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dir, d.name, d.name+".mjs")
		if err := bundleTS(root, d.code.Path, out); err != nil {
			return nil, fmt.Errorf("%s: %w", d.key, err)
		}
		cmd = append(cmd, d.flag, out+":"+d.code.Attr, d.flag+"-driver", driver)
	}
	return cmd, nil
}

// compileTS compiles one of the host's files and writes it into dir as name-<hash>.mjs.
func compileTS(dir, name, source string) (string, error) {
	res := api.Transform(source, api.TransformOptions{Loader: api.LoaderTS, Format: api.FormatESModule,
		Target: api.ES2022, Sourcefile: "jetgraph-" + name + ".ts"})
	if len(res.Errors) > 0 {
		return "", fmt.Errorf("hosting: compile the TypeScript host (%s): %s", name, res.Errors[0].Text)
	}
	sum := sha256.Sum256(res.Code)
	file := filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6])+".mjs")
	return file, writeIfChanged(file, res.Code)
}

// bundleTS bundles the user's file (local imports in, packages out) into out.
func bundleTS(root, entry, out string) error {
	res := api.Build(api.BuildOptions{EntryPoints: []string{entry}, Outfile: out, Bundle: true,
		Packages: api.PackagesExternal, Platform: api.PlatformNode, Format: api.FormatESModule,
		Target: api.ES2022, Write: true, LogLevel: api.LogLevelSilent, AbsWorkingDir: root, Sourcemap: api.SourceMapInline})
	if len(res.Errors) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(res.Errors))
	for _, m := range res.Errors {
		loc := ""
		if m.Location != nil {
			loc = fmt.Sprintf("%s:%d:%d: ", m.Location.File, m.Location.Line, m.Location.Column)
		}
		msgs = append(msgs, loc+m.Text)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// nodeProject is the folder whose node_modules the graphs import from: the config's, else the
// first of langgraph.json's local dependencies that has one (a config beside a package folder).
func nodeProject(configDir string, deps []string) (string, error) {
	for _, dir := range append([]string{configDir}, deps...) {
		if fi, err := os.Stat(filepath.Join(dir, "node_modules")); err == nil && fi.IsDir() {
			return dir, nil
		}
	}
	where := configDir
	if len(deps) > 0 {
		where += " nor in the local dependencies " + strings.Join(deps, ", ")
	}
	return "", fmt.Errorf("no node_modules in %s: install the project's dependencies (npm ci) first", where)
}

// writeIfChanged writes data to path unless the file already holds it, through a temporary file
// of its own renamed into place, so that a host started meanwhile (or another jetgraph writing the
// same file) never reads half a file.
func writeIfChanged(path string, data []byte) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == string(data) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+"-*.tmp")
	if err != nil {
		return fmt.Errorf("hosting: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("hosting: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("hosting: %w", err)
	}
	return nil
}

// FindNode returns the Node that runs TypeScript graphs: the given one (a flag), else node on
// PATH.
func FindNode(given string) (string, error) {
	if given == "" {
		given = "node"
	}
	p, err := exec.LookPath(given)
	if err != nil {
		return "", errors.New("no Node found: install Node 20 or newer, or name it with --node")
	}
	return p, nil
}
