// Package platform is a platform repo's Pulumi program in Go: two training jobs, a Redis
// backend they rendezvous through and a GPU node pool, with the trainjobs SDK generated
// from the component provider's schema (make sdk). The same resources as
// examples/yaml-stack, in namespace ml-go. The job types are Go structs: the compiler
// refuses a misspelt field or a value of the wrong type.
package platform

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"trainjobs.dev/sdk/go/trainjobs"
)

// Namespace holds the program's objects; it must exist.
const Namespace = "ml-go"

func container(name, image string, command []string, resources map[string]any) map[string]any {
	return map[string]any{"name": name, "image": image, "command": command, "resources": resources}
}

func podTemplate(containers ...map[string]any) pulumi.Input {
	list := make([]any, len(containers))
	for i, c := range containers {
		list[i] = c
	}
	return pulumi.Any(map[string]any{"spec": map[string]any{"containers": list}})
}

// Platform declares the resources; main.go runs it under `pulumi up`, automation/main.go
// as an Automation API inline program.
func Platform(ctx *pulumi.Context) error {
	redis, err := trainjobs.NewRedisBackend(ctx, "redis", &trainjobs.RedisBackendArgs{
		Namespace: pulumi.String(Namespace),
		Spec:      trainjobs.RedisBackendSpecArgs{Port: pulumi.Int(6379)},
	})
	if err != nil {
		return err
	}
	a100, err := trainjobs.NewGpuNodePool(ctx, "a100", &trainjobs.GpuNodePoolArgs{
		Spec: trainjobs.GpuNodePoolSpecArgs{
			Provider:    trainjobs.GpuNodePoolSpecProviderStatic,
			Gpu:         trainjobs.GpuNodePoolSpecGpuA10080gb,
			GpusPerNode: pulumi.Int(8),
			Cpu:         pulumi.Int(94),
			Memory:      pulumi.String("1100Gi"),
			MaxNodes:    pulumi.Int(4),
			Labels:      pulumi.StringMap{"gpu-pool": pulumi.String("a100")},
			Static:      trainjobs.StaticSettingsArgs{DevicePlugin: pulumi.Bool(false)},
		},
	})
	if err != nil {
		return err
	}
	small := map[string]any{
		"requests": map[string]any{"cpu": "1", "memory": "2Gi"},
		"limits":   map[string]any{"cpu": "1", "memory": "2Gi"},
	}
	tensorflow := container("tensorflow", "kubeflow/tf-mnist-with-summaries:1.0",
		[]string{"python", "/var/tf_mnist/mnist_with_summaries.py"}, small)
	mnist, err := trainjobs.NewTrainingJob(ctx, "mnist", &trainjobs.TrainingJobArgs{
		Target:  trainjobs.JobOptionsTargetPods,
		Backend: redis,
		Job: trainjobs.TFJobArgs{
			ApiVersion: pulumi.String("kubeflow.org/v1"),
			Kind:       pulumi.String("TFJob"),
			Metadata: trainjobs.ObjectMetaArgs{
				Name: pulumi.String("mnist"), Namespace: pulumi.String(Namespace),
			},
			Spec: trainjobs.TFJobSpecArgs{
				TfReplicaSpecs: trainjobs.ReplicaSpecMap{
					"Chief":  trainjobs.ReplicaSpecArgs{Replicas: pulumi.Int(1), Template: podTemplate(tensorflow)},
					"Worker": trainjobs.ReplicaSpecArgs{Replicas: pulumi.Int(2), Template: podTemplate(tensorflow)},
				},
			},
		},
	})
	if err != nil {
		return err
	}
	gpus := map[string]any{
		"requests": map[string]any{"cpu": "16", "memory": "64Gi"},
		"limits":   map[string]any{"nvidia.com/gpu": 8},
	}
	pytorch := container("pytorch", "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
		[]string{"torchrun", "train_bert.py"}, gpus)
	bert, err := trainjobs.NewTrainingJob(ctx, "bert", &trainjobs.TrainingJobArgs{
		Target:   trainjobs.JobOptionsTargetOperator,
		NodePool: a100,
		Job: trainjobs.PyTorchJobArgs{
			ApiVersion: pulumi.String("kubeflow.org/v1"),
			Kind:       pulumi.String("PyTorchJob"),
			Metadata: trainjobs.ObjectMetaArgs{
				Name: pulumi.String("bert"), Namespace: pulumi.String(Namespace),
			},
			Spec: trainjobs.PyTorchJobSpecArgs{
				NprocPerNode: pulumi.String("8"),
				RunPolicy:    trainjobs.RunPolicyArgs{BackoffLimit: pulumi.Int(3)},
				ElasticPolicy: trainjobs.ElasticPolicyArgs{
					MinReplicas: pulumi.Int(2), MaxReplicas: pulumi.Int(4),
					RdzvBackend: pulumi.String("c10d"),
				},
				PytorchReplicaSpecs: trainjobs.ReplicaSpecMap{
					"Worker": trainjobs.ReplicaSpecArgs{
						Replicas:      pulumi.Int(2),
						RestartPolicy: trainjobs.ReplicaSpecRestartPolicyOnFailure,
						Template:      podTemplate(pytorch),
					},
				},
			},
		},
	})
	if err != nil {
		return err
	}
	ctx.Export("mnistAddresses", mnist.Addresses)
	ctx.Export("bertObjects", bert.Objects)
	ctx.Export("redisAddress", redis.Outputs)
	return nil
}
