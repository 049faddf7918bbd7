package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// nodeManager is a package manager, found by its lock file.
type nodeManager struct {
	lock, tool string
	install    []string
}

// nodeManagers are the lock files looked for, in this order, and how each installs exactly
// what it locks.
var nodeManagers = []nodeManager{
	{"package-lock.json", "npm", []string{"npm", "ci", "--no-audit", "--no-fund"}},
	{"npm-shrinkwrap.json", "npm", []string{"npm", "ci", "--no-audit", "--no-fund"}},
	{"yarn.lock", "yarn", []string{"yarn", "install", "--frozen-lockfile"}},
	{"pnpm-lock.yaml", "pnpm", []string{"pnpm", "install", "--frozen-lockfile"}},
	{"bun.lock", "bun", []string{"bun", "install", "--frozen-lockfile"}},
	{"bun.lockb", "bun", []string{"bun", "install", "--frozen-lockfile"}},
}

// findLock returns the folder of the project's lock file (the config's folder, else the
// repository's root) and its manager; nil when there is none.
func findLock(cfgDir, root string) (string, *nodeManager) {
	for _, dir := range []string{cfgDir, root} {
		for i := range nodeManagers {
			if fi, err := os.Stat(filepath.Join(dir, nodeManagers[i].lock)); err == nil && fi.Mode().IsRegular() {
				return dir, &nodeManagers[i]
			}
		}
	}
	return "", nil
}

// nodeKeyFiles are the files of the lock file's folder an install depends on besides the lock
// file: the cache key holds their contents, so that a change to any of them installs again.
var nodeKeyFiles = []string{"package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", "bunfig.toml"}

// installNode installs a TypeScript project's packages: with the lock file's package manager
// from its folder, or with install_command from the repository's root, reusing the
// node_modules of an earlier build whose lock file, package.json, Node major version and
// command were the same. It returns the node_modules/.bin folder (the build_command's PATH).
func (b *Builder) installNode(ctx context.Context, installCommand, root, cfgDir string, cfg projectConfig,
	env []string, timeout time.Duration, log io.Writer) (string, error) {
	version, err := toolVersion(ctx, env, "node", "--version")
	if err != nil {
		return "", failed("TypeScript graphs need Node: no node on PATH (%v)", err)
	}
	version = strings.TrimPrefix(version, "v")
	if want := versionOf(cfg.NodeVersion); want != "" && !versionMatches(version, want) {
		return "", failed("node_version %s: the Node here is %s", want, version)
	}
	fmt.Fprintf(log, "node %s\n", version)
	lockDir, m := findLock(cfgDir, root)
	var install step
	switch {
	case installCommand != "":
		install = step{"install_command", root, []string{"/bin/sh", "-c", installCommand}}
		if lockDir == "" {
			lockDir = cfgDir
		}
	case m == nil:
		return "", failed("no lock file in the config's folder or the repository's root (one of package-lock.json, yarn.lock, " +
			"pnpm-lock.yaml, bun.lock): commit the one of your package manager, or give install_command")
	default:
		if _, err := lookPath(env, m.tool); err != nil {
			return "", failed("%s needs %s, which is not on the control plane's PATH: install it there, or give install_command", m.lock, m.tool)
		}
		install = step{m.tool + " install", lockDir, m.install}
	}
	nodeModules := filepath.Join(lockDir, "node_modules")
	parts := [][]byte{[]byte("node " + strings.Split(version, ".")[0]), []byte(strings.Join(install.args, " "))}
	if m != nil {
		lock, err := os.ReadFile(filepath.Join(lockDir, m.lock))
		if err != nil {
			return "", fmt.Errorf("build: %w", err)
		}
		parts = append(parts, []byte(m.lock), lock)
	}
	for _, name := range nodeKeyFiles {
		raw, err := os.ReadFile(filepath.Join(lockDir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("build: %w", err)
		}
		parts = append(parts, []byte(name), raw)
	}
	key := cacheKey(parts...)
	if m == nil { // install_command without a lock file: nothing says what it installs
		fmt.Fprintf(log, "dependencies: installing (no lock file: not cached)\n")
		return filepath.Join(nodeModules, ".bin"), b.run(ctx, install, env, timeout, log)
	}
	entry := filepath.Join(b.cache(), "node", key)
	unlock, err := cacheLock(entry)
	if err != nil {
		return "", fmt.Errorf("build: the dependency cache: %w", err)
	}
	defer unlock()
	if complete(entry) {
		fmt.Fprintf(log, "dependencies: cache hit %s (%s unchanged): node_modules linked, nothing downloaded\n", shortKey(key), m.lock)
		if err := os.RemoveAll(nodeModules); err != nil {
			return "", fmt.Errorf("build: %w", err)
		}
		if err := linkTree(filepath.Join(entry, "node_modules"), nodeModules); err != nil {
			return "", fmt.Errorf("build: link the cached node_modules: %w", err)
		}
		return filepath.Join(nodeModules, ".bin"), nil
	}
	fmt.Fprintf(log, "dependencies: installing (cache miss %s)\n", shortKey(key))
	if err := b.run(ctx, install, env, timeout, log); err != nil {
		return "", err
	}
	// A project without packages has no node_modules: an empty one is what it caches.
	if err := os.MkdirAll(nodeModules, 0o755); err != nil {
		return "", fmt.Errorf("build: %w", err)
	}
	if err := os.RemoveAll(entry); err != nil {
		return "", fmt.Errorf("build: the dependency cache: %w", err)
	}
	if err := linkTree(nodeModules, filepath.Join(entry, "node_modules")); err != nil {
		return "", fmt.Errorf("build: the dependency cache: %w", err)
	}
	if err := markComplete(entry); err != nil {
		return "", fmt.Errorf("build: the dependency cache: %w", err)
	}
	fmt.Fprintf(log, "dependencies: cached as %s\n", shortKey(key))
	return filepath.Join(nodeModules, ".bin"), nil
}

// rel is path inside the repository root, for messages ("." for the root).
func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}
