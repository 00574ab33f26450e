"""Synthetic stacks for the benchmarks: N jobs of 8 replicas, mixed frameworks."""

from __future__ import annotations

from typing import Any

from trainjobs.spec import StackSpec, parse_documents

REPLICAS = 8


def _container(name: str, index: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"registry.example.com/train:{index % 7}.0",
        "command": ["python", "train.py", f"--seed={index}"],
        "resources": {
            "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": 1},
            "limits": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": 1},
        },
    }


def tfjob(index: int, replicas: int = REPLICAS) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": f"tf-{index}", "namespace": "bench"},
        "spec": {
            "tfReplicaSpecs": {
                "Chief": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [_container("tensorflow", index)]}},
                },
                "Worker": {
                    "replicas": replicas - 1,
                    "template": {"spec": {"containers": [_container("tensorflow", index)]}},
                },
            }
        },
    }


def pytorchjob(index: int, replicas: int = REPLICAS) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": f"pt-{index}", "namespace": "bench"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [_container("pytorch", index)]}},
                },
                "Worker": {
                    "replicas": replicas - 1,
                    "template": {"spec": {"containers": [_container("pytorch", index)]}},
                },
            }
        },
    }


GENERATORS = (tfjob, pytorchjob)


def job_documents(count: int, replicas: int = REPLICAS) -> list[dict[str, Any]]:
    """``count`` jobs cycling through every framework generator."""
    return [GENERATORS[i % len(GENERATORS)](i, replicas) for i in range(count)]


def stack(count: int, replicas: int = REPLICAS) -> StackSpec:
    return parse_documents(job_documents(count, replicas))
