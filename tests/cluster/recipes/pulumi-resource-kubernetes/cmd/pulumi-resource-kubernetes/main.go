// Command pulumi-resource-kubernetes serves the Kubernetes provider package of
// github.com/pulumi/pulumi-kubernetes/provider/v4.
//
// The provider's own main embeds a copy of schema.json with the version filled in, which
// its `go generate` step writes and the module does not carry. tests/cluster/build.sh
// copies the module's committed schema.json and terraform-mapping.json beside this
// binary instead; they are read from there at start and the schema's version is set to
// the release this binary was built as (the version package's Version, set by -ldflags).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

const providerName = "kubernetes"

// beside reads a file that build.sh put next to this executable.
func beside(name string) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(filepath.Dir(exe), name))
}

// versionedSchema returns the schema with its "version" field set, as the provider's
// generate step does; the engine compares it with the plugin version.
func versionedSchema(raw []byte, v string) ([]byte, error) {
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	quoted, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	spec["version"] = quoted
	return json.Marshal(spec)
}

func main() {
	if version.Version == "" {
		fmt.Fprintln(os.Stderr, "pulumi-resource-kubernetes: built without a version "+
			"(-X .../pkg/version.Version); build it with tests/cluster/build.sh")
		os.Exit(1)
	}
	raw, err := beside("pulumi-resource-kubernetes.schema.json")
	if err == nil {
		raw, err = versionedSchema(raw, version.Version)
	}
	var mapping []byte
	if err == nil {
		mapping, err = beside("pulumi-resource-kubernetes.terraform-mapping.json")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-resource-kubernetes: %v\n", err)
		os.Exit(1)
	}
	provider.Serve(providerName, version.Version, raw, mapping)
}
