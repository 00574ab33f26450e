// Runs platform.Platform as an Automation API inline program: the Go SDK serves the
// program's language runtime itself, so no Go language host is needed (the module proxy
// serves none; this repo's tests run it so). The engine finds the trainjobs provider as
// pulumi-resource-trainjobs on PATH (the clone's root) and the Pulumi CLI on PATH.
//
//	go run ./automation up|preview|destroy STACK
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"

	"trainjobs.dev/examples/go-platform/platform"
)

const project = "trainjobs-go-platform"

func run(ctx context.Context, command, stackName string) (any, error) {
	stack, err := auto.UpsertStackInlineSource(ctx, stackName, project, platform.Platform)
	if err != nil {
		return nil, err
	}
	switch command {
	case "up":
		res, err := stack.Up(ctx, optup.ProgressStreams(os.Stdout))
		if err != nil {
			return nil, err
		}
		return res.Summary.ResourceChanges, nil
	case "preview":
		res, err := stack.Preview(ctx, optpreview.Diff(), optpreview.ProgressStreams(os.Stdout))
		if err != nil {
			return nil, err
		}
		return res.ChangeSummary, nil
	case "destroy":
		res, err := stack.Destroy(ctx, optdestroy.ProgressStreams(os.Stdout))
		if err != nil {
			return nil, err
		}
		return res.Summary.ResourceChanges, nil
	}
	return nil, fmt.Errorf("unknown command %q (up, preview or destroy)", command)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: automation up|preview|destroy STACK")
		os.Exit(2)
	}
	result, err := run(context.Background(), os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	text, _ := json.Marshal(result)
	fmt.Printf("\nRESULT %s\n", text)
}
