"""Trainer v2 helpers: the node container, runtime names."""

from __future__ import annotations

from trainjobs.frameworks.pytorch import FRAMEWORK as PYTORCH
from trainjobs.frameworks.pytorch import PyTorchJob
from trainjobs.k8s.model import ObjectMeta
from trainjobs.plan import JobPlan
from trainjobs.plan.trainer import as_node
from trainjobs.targets.trainer import runtime_name


def test_the_trainer_container_is_renamed_and_loses_the_v1_port() -> None:
    template = {
        "spec": {
            "containers": [
                {
                    "name": "pytorch",
                    "image": "i",
                    "ports": [{"name": "pytorchjob-port", "containerPort": 23456}],
                },
                {"name": "sidecar", "image": "s", "ports": [{"containerPort": 80}]},
            ]
        }
    }
    node = as_node(template, "pytorch", "pytorchjob-port")
    assert node["spec"]["containers"] == [
        {"name": "node", "image": "i"},
        {"name": "sidecar", "image": "s", "ports": [{"containerPort": 80}]},
    ]
    assert template["spec"]["containers"][0]["name"] == "pytorch"


def test_runtime_names_are_unique_per_namespace_and_fit() -> None:
    def job(name: str, namespace: str) -> JobPlan:
        meta = ObjectMeta(name=name, namespace=namespace)
        return PYTORCH.plan(
            PyTorchJob.model_validate(
                {"metadata": meta.to_manifest(), "spec": {"pytorchReplicaSpecs": {}}}
            )
        )

    assert runtime_name(job("ddp", "team-a")) == "team-a-ddp"
    assert runtime_name(job("ddp", "team-b")) != runtime_name(job("ddp", "team-a"))
    long = runtime_name(job("x" * 63, "y" * 63))
    assert len(long) == 127
