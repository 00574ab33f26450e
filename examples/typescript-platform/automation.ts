// Runs platform.ts's program as an Automation API inline program: the Node.js SDK serves
// the program's language runtime itself, so no Node.js language host is needed (the Go
// module proxy serves none; this repo's tests run it so). With official Pulumi, plain
// `pulumi up` in this folder runs index.ts through Pulumi's Node.js host instead.
//
//   node bin/automation.js up|preview|destroy STACK
//
// The engine finds the trainjobs provider as `pulumi-resource-trainjobs` on PATH (the
// clone's root) and the Pulumi CLI on PATH; state and secrets as PULUMI_* say.
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { platform } from "./platform";

const PROJECT = "trainjobs-typescript-platform";

async function main(command: string, stackName: string): Promise<number> {
    const stack = await LocalWorkspace.createOrSelectStack(
        { stackName, projectName: PROJECT, program: async () => platform() },
        { projectSettings: { name: PROJECT, runtime: "nodejs" } },
    );
    const onOutput = (text: string) => process.stdout.write(text);
    if (command === "up") {
        const result = await stack.up({ onOutput });
        process.stdout.write(`\nRESULT ${JSON.stringify(result.summary.resourceChanges)}\n`);
    } else if (command === "preview") {
        const result = await stack.preview({ onOutput, diff: true });
        process.stdout.write(`\nRESULT ${JSON.stringify(result.changeSummary)}\n`);
    } else if (command === "destroy") {
        const result = await stack.destroy({ onOutput });
        process.stdout.write(`\nRESULT ${JSON.stringify(result.summary.resourceChanges)}\n`);
    } else {
        process.stderr.write(`unknown command ${command} (up, preview or destroy)\n`);
        return 2;
    }
    return 0;
}

main(process.argv[2] ?? "", process.argv[3] ?? "").then(
    (code) => process.exit(code),
    (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
    },
);
