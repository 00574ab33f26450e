// pulumi-codegen writes the TypeScript or Go SDK of a Pulumi package schema with the
// code generators of github.com/pulumi/pulumi/pkg/v3 (the release the tests' CLI is),
// as `pulumi package gen-sdk` would; that command needs language hosts the module proxy
// does not serve.
//
//	pulumi-codegen nodejs|go SCHEMA.json OUT_DIR
//
// The schema must be self-contained: it may refer to no other package.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	nodejsgen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// noPackages refuses every package: the schema is bound on its own.
type noPackages struct{}

var errExternal = errors.New("the schema refers to another package; pulumi-codegen binds it alone")

func (noPackages) LoadPackage(string, *semver.Version) (*schema.Package, error) {
	return nil, errExternal
}

func (noPackages) LoadPackageV2(context.Context, *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, errExternal
}

func (noPackages) LoadPackageReference(string, *semver.Version) (schema.PackageReference, error) {
	return nil, errExternal
}

func (noPackages) LoadPackageReferenceV2(
	context.Context, *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	return nil, errExternal
}

func run(language, schemaPath, outDir string) error {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %w", schemaPath, err)
	}
	pkg, diags, err := schema.BindSpec(spec, noPackages{}, schema.ValidationOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", schemaPath, err)
	}
	if diags.HasErrors() {
		return fmt.Errorf("%s: %s", schemaPath, diags.Error())
	}
	var files map[string][]byte
	switch language {
	case "nodejs":
		files, err = nodejsgen.GeneratePackage("pulumi-codegen", pkg, nil, nil, false, noPackages{})
	case "go":
		files, err = gogen.GeneratePackage("pulumi-codegen", pkg, nil)
	default:
		err = fmt.Errorf("unknown language %q (nodejs or go)", language)
	}
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(outDir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-codegen nodejs|go SCHEMA.json OUT_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "pulumi-codegen:", err)
		os.Exit(1)
	}
}
