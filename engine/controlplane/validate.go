package controlplane

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
)

// deploymentName is what a deployment's name may be: it also names its tracing project and
// its data namespace.
var deploymentName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,62}$`)

// reservedSecrets are environment variables the platform sets itself in a deployment's
// processes; reservedPrefixes too, by prefix.
var (
	reservedSecrets  = []string{"POSTGRES_URI", "REDIS_URI", "PORT", "DATABASE_URI", "NATS_URL"}
	reservedPrefixes = []string{"JETGRAPH_", "LANGSMITH_", "LANGCHAIN_"}
)

// deploymentTypes are source_config.deployment_type's values.
var deploymentTypes = []string{"dev_free", "dev", "prod"}

// DefaultGraphConfigPath is a git_host revision's graph config when none is named.
const DefaultGraphConfigPath = "graph.json"

// ParseCreate checks a POST /v2/deployments body and returns the deployment it describes
// (without its read-only fields); every violation is reported at once, located in the body.
func ParseCreate(body map[string]any) (Deployment, error) {
	d, c := parseCreate(body)
	if err := c.v.Err("controlplane.create_deployment"); err != nil {
		return Deployment{}, err
	}
	return d, nil
}

// parseCreate is ParseCreate's reading of the body, with what it found wrong so far: the
// command adds what needs the state (the listener) before it answers.
func parseCreate(body map[string]any) (Deployment, *checker) {
	c := &checker{}
	body = orEmptyMap(body)
	root := []any{"body"}
	var d Deployment
	for _, k := range []string{"name", "source", "source_config", "source_revision_config", "secrets"} {
		c.required(body, k, root)
	}
	if name, ok := c.str(body, "name", root); ok {
		if !deploymentName.MatchString(name) {
			c.add("string_pattern_mismatch", "A name holds letters, digits and '-', starts with a letter and has at most 63 characters", at(root, "name"))
		}
		d.Name = name
	}
	if s, ok := c.str(body, "source", root); ok {
		switch Source(s) {
		case SourceGitHost, sourceGitHubAlias:
			d.Source = SourceGitHost
		case SourceExternalContainer:
			d.Source = SourceExternalContainer
		case SourceInternalContainer:
			c.add("value_error", "internal_container deployments are not supported by jetgraph: use git_host or external_container", at(root, "source"))
		default:
			c.add("enum", "Input should be 'git_host', 'external_container' or 'internal_container'", at(root, "source"))
		}
	}
	sc, _ := c.object(body, "source_config", root)
	src, _ := c.object(body, "source_revision_config", root)
	d.SourceConfig = c.sourceConfig(orEmptyMap(sc), at(root, "source_config"), d.Source, true)
	d.SourceRevisionConfig = c.revisionConfig(orEmptyMap(src), at(root, "source_revision_config"), d.Source, true)
	d.Secrets = c.secrets(body, root, nil)
	d.ImageVersion = c.optString(body, "image_version", root)
	c.buildOnPush(d, root)
	c.secretSize(d, root)
	return d, c
}

// ParsePatch checks a PATCH /v2/deployments/{id} body against the deployment as it is, and
// returns it changed, and whether the change makes a new revision (the spec's rule: a non-null
// repo_ref, graph_config_path, image_uri, secrets or resource_spec).
func ParsePatch(body map[string]any, cur Deployment) (Deployment, bool, error) {
	c := &checker{}
	body = orEmptyMap(body)
	root := []any{"body"}
	d := cur
	d.Secrets = slices.Clone(cur.Secrets)
	if v, ok := body["name"]; ok && v != nil && v != any(cur.Name) {
		c.add("value_error", "name cannot be changed after creation", at(root, "name"))
	}
	if v, ok := body["source"]; ok && v != nil && v != any(string(cur.Source)) && !(cur.Source == SourceGitHost && v == any(string(sourceGitHubAlias))) {
		c.add("value_error", "source cannot be changed after creation", at(root, "source"))
	}
	newRevision := false
	if sc, ok := c.object(body, "source_config", root); ok {
		loc := at(root, "source_config")
		for _, k := range []string{"integration_id", "repo_url", "deployment_type", "listener_id"} {
			if v, ok := sc[k]; ok && v != nil && !reflect.DeepEqual(v, jsonValue(fieldOf(cur.SourceConfig, k))) {
				c.add("value_error", k+" cannot be changed after creation", at(loc, k))
			}
		}
		if lc, ok := c.object(sc, "listener_config", loc); ok {
			if v, ok := lc["cluster_namespace"]; ok && v != nil && (cur.SourceConfig.ListenerConfig == nil || !reflect.DeepEqual(v, jsonValue(cur.SourceConfig.ListenerConfig.ClusterNamespace))) {
				c.add("value_error", "cluster_namespace cannot be changed after creation", at(loc, "listener_config", "cluster_namespace"))
			}
		}
		next := c.sourceConfig(sc, loc, cur.Source, false)
		if _, ok := sc["build_on_push"]; ok {
			d.SourceConfig.BuildOnPush = next.BuildOnPush
		}
		if next.ResourceSpec != nil {
			d.SourceConfig.ResourceSpec = next.ResourceSpec
			newRevision = true
		}
		if next.InstallCommand != nil {
			d.SourceConfig.InstallCommand = next.InstallCommand
		}
		if next.BuildCommand != nil {
			d.SourceConfig.BuildCommand = next.BuildCommand
		}
		if next.CustomURL != nil && cur.Source == SourceExternalContainer {
			d.SourceConfig.CustomURL = next.CustomURL
		}
	}
	if src, ok := c.object(body, "source_revision_config", root); ok {
		next := c.revisionConfig(src, at(root, "source_revision_config"), cur.Source, false)
		for _, f := range []struct{ from, to **string }{
			{&next.RepoRef, &d.SourceRevisionConfig.RepoRef},
			{&next.GraphConfigPath, &d.SourceRevisionConfig.GraphConfigPath},
			{&next.ImageURI, &d.SourceRevisionConfig.ImageURI},
		} {
			if *f.from != nil {
				*f.to, newRevision = *f.from, true
			}
		}
	}
	if v, ok := body["secrets"]; ok && v != nil {
		d.Secrets = c.secrets(body, root, cur.Secrets)
		newRevision = true
	}
	if v := c.optString(body, "image_version", root); v != nil {
		d.ImageVersion = v
	}
	c.buildOnPush(d, root)
	c.secretSize(d, root)
	if err := c.v.Err("controlplane.update_deployment"); err != nil {
		return cur, false, err
	}
	if newRevision {
		d.SourceRevisionConfig.RepoCommitSHA = nil
	}
	return d, newRevision, nil
}

// buildOnPush refuses build_on_push on a tag: a tag never moves.
func (c *checker) buildOnPush(d Deployment, root []any) {
	if d.SourceConfig.BuildOnPush != nil && *d.SourceConfig.BuildOnPush && d.SourceRevisionConfig.RepoRef != nil &&
		strings.HasPrefix(*d.SourceRevisionConfig.RepoRef, "refs/tags/") {
		c.add("value_error", "build_on_push cannot be enabled when repo_ref is a tag (refs/tags/...)", at(root, "source_config", "build_on_push"))
	}
}

// maxSecretBytes is Kubernetes' bound on a Secret's data, which an external_container
// deployment's secrets become.
const maxSecretBytes = 1 << 20

// secretSize refuses the secrets of an external_container deployment that make a Secret larger
// than Kubernetes takes.
func (c *checker) secretSize(d Deployment, root []any) {
	if d.Source != SourceExternalContainer {
		return
	}
	n := 0
	for _, s := range d.Secrets {
		n += len(s.Name) + len(s.Value)
	}
	if n > maxSecretBytes {
		c.add("too_long", fmt.Sprintf("The secrets hold %d bytes: the Kubernetes Secret they become takes at most %d (1 MiB)", n, maxSecretBytes), at(root, "secrets"))
	}
}

// onlyFor refuses a field given for a source it does not apply to.
func (c *checker) onlyFor(m map[string]any, key string, loc []any, src, want Source) {
	if v, ok := m[key]; ok && v != nil && src != "" && src != want {
		c.add("value_error", key+" applies to "+string(want)+" deployments only", at(loc, key))
	}
}

func (c *checker) sourceConfig(sc map[string]any, loc []any, src Source, create bool) SourceConfig {
	var out SourceConfig
	for _, k := range []string{"integration_id", "repo_url", "deployment_type", "build_on_push", "install_command", "build_command"} {
		c.onlyFor(sc, k, loc, src, SourceGitHost)
	}
	for _, k := range []string{"listener_id", "listener_config"} {
		c.onlyFor(sc, k, loc, src, SourceExternalContainer)
	}
	if v, ok := sc["custom_url"]; ok && v != nil && src == SourceGitHost {
		c.add("value_error", "custom_url is set by jetgraph for git_host deployments", at(loc, "custom_url"))
	}
	out.IntegrationID = c.uuidField(sc, "integration_id", loc)
	out.RepoURL = c.optString(sc, "repo_url", loc)
	if out.RepoURL != nil && strings.TrimSpace(*out.RepoURL) == "" {
		c.add("string_too_short", "String should have at least 1 character", at(loc, "repo_url"))
	}
	c.enum(sc, "deployment_type", loc, deploymentTypes...)
	out.DeploymentType = c.optString(sc, "deployment_type", loc)
	if b, ok := c.boolean(sc, "build_on_push", loc); ok {
		out.BuildOnPush = &b
	}
	out.CustomURL = c.optString(sc, "custom_url", loc)
	out.InstallCommand = c.optString(sc, "install_command", loc)
	out.BuildCommand = c.optString(sc, "build_command", loc)
	out.ListenerID = c.uuidField(sc, "listener_id", loc)
	if lc, ok := c.object(sc, "listener_config", loc); ok {
		l := at(loc, "listener_config")
		out.ListenerConfig = &ListenerConfig{ClusterNamespace: c.optString(lc, "cluster_namespace", l)}
		if ns := out.ListenerConfig.ClusterNamespace; ns != nil {
			dnsLabel(&c.v, *ns, at(l, "cluster_namespace"))
		}
	}
	if rs, ok := sc["resource_spec"]; ok && rs != nil {
		raw, _ := json.Marshal(rs)
		_, out.ResourceSpec = checkResourceSpec(&c.v, raw, at(loc, "resource_spec"))
		if out.ResourceSpec == nil {
			out.ResourceSpec = json.RawMessage(`{}`) // refused anyway: keeps "a resource_spec was given"
		}
	}
	if create {
		switch src {
		case SourceGitHost:
			c.required(sc, "repo_url", loc)
		case SourceExternalContainer:
			c.required(sc, "listener_id", loc)
		}
	}
	return out
}

func (c *checker) revisionConfig(src map[string]any, loc []any, source Source, create bool) SourceRevisionConfig {
	var out SourceRevisionConfig
	c.onlyFor(src, "repo_ref", loc, source, SourceGitHost)
	c.onlyFor(src, "graph_config_path", loc, source, SourceGitHost)
	c.onlyFor(src, "image_uri", loc, source, SourceExternalContainer)
	if v, ok := src["repo_commit_sha"]; ok && v != nil {
		c.add("value_error", "repo_commit_sha is read-only", at(loc, "repo_commit_sha"))
	}
	out.RepoRef = c.optString(src, "repo_ref", loc)
	out.GraphConfigPath = c.optString(src, "graph_config_path", loc)
	out.ImageURI = c.optString(src, "image_uri", loc)
	for _, f := range []struct {
		key string
		v   *string
	}{{"repo_ref", out.RepoRef}, {"graph_config_path", out.GraphConfigPath}, {"image_uri", out.ImageURI}} {
		if f.v != nil && strings.TrimSpace(*f.v) == "" {
			c.add("string_too_short", "String should have at least 1 character", at(loc, f.key))
		}
	}
	if p := out.GraphConfigPath; p != nil && (strings.HasPrefix(*p, "/") || slices.Contains(strings.Split(*p, "/"), "..")) {
		c.add("value_error", "graph_config_path is relative to the repository and stays inside it", at(loc, "graph_config_path"))
	}
	if create {
		switch source {
		case SourceGitHost:
			c.required(src, "repo_ref", loc)
		case SourceExternalContainer:
			c.required(src, "image_uri", loc)
		}
	}
	return out
}

// secrets reads the body's secrets list, the whole set the deployment will have: a secret left
// out is removed, and a value equal to SecretMask (what every answer shows) keeps the value of the
// secret of that name in cur, so a deployment read and sent back changes no secret. A mask with
// no value to keep (a new name, or on create, where cur is nil) is refused: stored, the mask
// would replace a credential with eight asterisks.
func (c *checker) secrets(body map[string]any, root []any, cur []Secret) []Secret {
	list, _ := c.list(body, "secrets", root)
	out := []Secret{}
	seen := map[string]bool{}
	for i, v := range list {
		l := at(root, "secrets", i)
		o, ok := v.(map[string]any)
		if !ok {
			c.add("dict_type", "Input should be a valid dictionary", l)
			continue
		}
		c.required(o, "name", l)
		c.required(o, "value", l)
		name, nok := c.str(o, "name", l)
		value, vok := c.str(o, "value", l)
		if !nok || !vok {
			continue
		}
		switch {
		case !cIdentifier.MatchString(name):
			c.add("string_pattern_mismatch", "A secret's name must be an environment variable name: letters, digits and '_', not starting with a digit", at(l, "name"))
		case reserved(name):
			c.add("value_error", "The platform sets "+name+" itself: choose another name", at(l, "name"))
		case seen[name]:
			c.add("value_error", "Secret "+name+" is given twice", at(l, "name"))
		}
		seen[name] = true
		if value == SecretMask {
			i := slices.IndexFunc(cur, func(s Secret) bool { return s.Name == name })
			if i < 0 {
				c.add("value_error", "Secret "+name+" has no value to keep: "+SecretMask+" stands for an unchanged value, give the value itself", at(l, "value"))
				continue
			}
			value = cur[i].Value
		}
		out = append(out, Secret{Name: name, Value: value})
	}
	return out
}

func reserved(name string) bool {
	up := strings.ToUpper(name)
	if slices.Contains(reservedSecrets, up) {
		return true
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

func (c *checker) optString(m map[string]any, key string, loc []any) *string {
	if s, ok := c.str(m, key, loc); ok {
		return &s
	}
	return nil
}

func (c *checker) uuidField(m map[string]any, key string, loc []any) *string {
	s, ok := c.str(m, key, loc)
	if !ok {
		return nil
	}
	u, err := uuid.Parse(s)
	if err != nil {
		c.add("uuid_parsing", "Input should be a valid UUID", at(loc, key))
		return nil
	}
	id := u.String()
	return &id
}

// fieldOf is source_config's JSON member key of sc.
func fieldOf(sc SourceConfig, key string) any {
	raw, _ := json.Marshal(sc)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m[key]
}

// jsonValue is v as decoded JSON (a *string becomes a string, nil stays nil).
func jsonValue(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

func orEmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// ParseListener checks a POST (create) or PATCH /v2/listeners body; on PATCH (cur != nil)
// every field is optional and compute_type is immutable.
func ParseListener(body map[string]any, cur *Listener) (Listener, error) {
	c := &checker{}
	body = orEmptyMap(body)
	root := []any{"body"}
	var l Listener
	if cur != nil {
		l = *cur
	} else {
		c.required(body, "compute_type", root)
		c.required(body, "compute_id", root)
	}
	if s, ok := c.str(body, "compute_type", root); ok {
		switch {
		case !Kubernetes(s):
			c.add("enum", "Input should be "+quoteList(computeTypes), at(root, "compute_type"))
		case cur != nil && s != cur.ComputeType:
			c.add("value_error", "compute_type cannot be changed after creation", at(root, "compute_type"))
		}
		l.ComputeType = s
	}
	if s, ok := c.str(body, "compute_id", root); ok {
		if strings.TrimSpace(s) == "" {
			c.add("string_too_short", "String should have at least 1 character", at(root, "compute_id"))
		}
		l.ComputeID = s
	}
	if cc, ok := c.object(body, "compute_config", root); ok {
		l.ComputeConfig = cc
	}
	if l.ComputeConfig == nil {
		l.ComputeConfig = map[string]any{}
	}
	if err := c.v.Err("controlplane.listener"); err != nil {
		return Listener{}, err
	}
	return l, nil
}

// ValidateUUID returns id in its canonical form, or a violation at loc.
func ValidateUUID(id string, loc ...any) (string, *engine.FieldError) {
	u, err := uuid.Parse(id)
	if err != nil || len(id) != 36 {
		return "", &engine.FieldError{Loc: loc, Msg: "Input should be a valid UUID", Type: "uuid_parsing"}
	}
	return u.String(), nil
}
