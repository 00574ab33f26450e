// A platform repo's Pulumi program in TypeScript: two training jobs, a Redis backend
// they rendezvous through and a GPU node pool, with the trainjobs SDK generated from the
// component provider's schema (make sdk). The same resources as examples/yaml-stack, in
// namespace ml-ts. Every input is a pulumi.Input at every level; `tsc` refuses a
// misspelt field or a wrong enum value.
import * as pulumi from "@pulumi/pulumi";
import * as trainjobs from "@trainjobs/trainjobs";

// A job declared with its type gets the precise error: tsc names the misspelt field.
type TFJob = trainjobs.types.input.TFJobArgs;
type PyTorchJob = trainjobs.types.input.PyTorchJobArgs;

export const NAMESPACE = "ml-ts";

/** The program: index.ts runs it under `pulumi up`, automation.ts as an inline program. */
export function platform(): Record<string, pulumi.Output<unknown>> {
    const redis = new trainjobs.RedisBackend("redis", {
        namespace: NAMESPACE,
        spec: { port: 6379 },
    });
    const a100 = new trainjobs.GpuNodePool("a100", {
        spec: {
            provider: "static",
            gpu: "a100-80gb",
            gpusPerNode: 8,
            cpu: 94,
            memory: "1100Gi",
            maxNodes: 4,
            labels: { "gpu-pool": "a100" },
            static: { devicePlugin: false },
        },
    });
    const tensorflow = {
        name: "tensorflow",
        image: "kubeflow/tf-mnist-with-summaries:1.0",
        command: ["python", "/var/tf_mnist/mnist_with_summaries.py"],
        resources: {
            requests: { cpu: "1", memory: "2Gi" },
            limits: { cpu: "1", memory: "2Gi" },
        },
    };
    const mnistJob: TFJob = {
        apiVersion: "kubeflow.org/v1",
        kind: "TFJob",
        metadata: { name: "mnist", namespace: NAMESPACE },
        spec: {
            tfReplicaSpecs: {
                Chief: { replicas: 1, template: { spec: { containers: [tensorflow] } } },
                Worker: { replicas: 2, template: { spec: { containers: [tensorflow] } } },
            },
        },
    };
    const mnist = new trainjobs.TrainingJob("mnist", {
        target: "pods",
        backend: redis,
        job: mnistJob,
    });
    const bertJob: PyTorchJob = {
        apiVersion: "kubeflow.org/v1",
        kind: "PyTorchJob",
        metadata: { name: "bert", namespace: NAMESPACE },
        spec: {
            nprocPerNode: "8",
            runPolicy: { backoffLimit: 3 },
            elasticPolicy: { minReplicas: 2, maxReplicas: 4, rdzvBackend: "c10d" },
            pytorchReplicaSpecs: {
                Worker: {
                    replicas: 2,
                    restartPolicy: "OnFailure",
                    template: {
                        spec: {
                            containers: [
                                {
                                    name: "pytorch",
                                    image: "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                                    command: ["torchrun", "train_bert.py"],
                                    resources: {
                                        requests: { cpu: "16", memory: "64Gi" },
                                        limits: { "nvidia.com/gpu": 8 },
                                    },
                                },
                            ],
                        },
                    },
                },
            },
        },
    };
    const bert = new trainjobs.TrainingJob("bert", {
        target: "operator",
        nodePool: a100,
        job: bertJob,
    });
    return {
        mnistAddresses: mnist.addresses,
        bertObjects: bert.objects,
        redisAddress: redis.outputs,
    };
}
