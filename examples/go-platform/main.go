// The program as `pulumi up` runs it with Pulumi's Go host (official Pulumi).
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"trainjobs.dev/examples/go-platform/platform"
)

func main() {
	pulumi.Run(platform.Platform)
}
