"""The Trainer v2.3.0 webhook rules as findings, each with the path in the user's document."""

from __future__ import annotations

from typing import Any

from trainjobs.errors import Severity
from trainjobs.frameworks.trainjob import (
    TrainingRuntime,
    TrainJob,
    resolve_runtime,
    runtime_findings,
    trainjob_findings,
)


def _findings(spec: dict[str, Any], name: str = "tj") -> list[tuple[str, str, Severity]]:
    job = TrainJob.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": name},
            "spec": spec,
        }
    )
    runtime, _ = resolve_runtime(job)
    assert runtime is not None
    return [(f.code, f.path, f.severity) for f in trainjob_findings(job, runtime)]


E = Severity.ERROR


def test_reserved_env_per_policy() -> None:
    env = [{"name": "OK", "value": "1"}, {"name": "PET_NNODES", "value": "9"}]
    assert _findings({"runtimeRef": {"name": "torch-distributed"}, "trainer": {"env": env}}) == [
        ("trainjob.reserved_env", "spec.trainer.env[1].name", E)
    ]
    env = [{"name": "OMPI_MCA_plm_rsh_args", "value": "x"}]
    assert _findings(
        {"runtimeRef": {"name": "deepspeed-distributed"}, "trainer": {"env": env}}
    ) == [("trainjob.reserved_env", "spec.trainer.env[0].name", E)]
    env = [{"name": "DMLC_TASK_ID", "value": "x"}]
    assert _findings({"runtimeRef": {"name": "xgboost-distributed"}, "trainer": {"env": env}}) == [
        ("trainjob.reserved_env", "spec.trainer.env[0].name", E)
    ]
    # a torch name is no one's business on a JAX runtime
    env = [{"name": "PET_NNODES", "value": "x"}]
    assert _findings({"runtimeRef": {"name": "jax-distributed"}, "trainer": {"env": env}}) == []


def test_num_nodes_at_least_one_and_name() -> None:
    assert _findings(
        {"runtimeRef": {"name": "jax-distributed"}, "trainer": {"numNodes": 0}}, "Bad"
    ) == [
        ("trainjob.name", "metadata.name", E),
        ("trainjob.num_nodes", "spec.trainer.numNodes", E),
    ]


def test_policy_mismatches() -> None:
    assert _findings(
        {"runtimeRef": {"name": "jax-distributed"}, "trainer": {"numProcPerNode": 2}}
    ) == [("trainjob.num_proc_ignored", "spec.trainer.numProcPerNode", Severity.WARNING)]
    dataset = {"dataset": {"storageUri": "hf://x/y"}}
    assert _findings({"runtimeRef": {"name": "jax-distributed"}, "initializer": dataset}) == [
        ("trainjob.initializer_runtime", "spec.initializer.dataset", E)
    ]
    assert (
        _findings({"runtimeRef": {"name": "torchtune-llama3.2-1b"}, "initializer": dataset}) == []
    )


def test_torchtune_rules() -> None:
    spec = {
        "runtimeRef": {"name": "torchtune-llama3.2-1b"},
        "trainer": {"command": ["tune", "run"], "numNodes": 2, "args": ["output_dir=/x"]},
    }
    assert _findings(spec) == [
        ("trainjob.torchtune_nodes", "spec.trainer.numNodes", E),
        ("trainjob.torchtune_immutable", "spec.trainer.args[0]", E),
    ]


def test_runtime_patches_must_name_what_the_runtime_has() -> None:
    patch = {
        "manager": "no-domain",
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": "worker"},
                        {
                            "name": "node",
                            "template": {
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "env": [{"name": "A", "value": "b"}],
                                                },
                                                {"name": "sidecar"},
                                            ]
                                        }
                                    }
                                }
                            },
                        },
                    ]
                }
            }
        },
    }
    base = "spec.runtimePatches[0]"
    rjobs = f"{base}.trainingRuntimeSpec.template.spec.replicatedJobs"
    containers = f"{rjobs}[1].template.spec.template.spec.containers"
    assert _findings({"runtimeRef": {"name": "torch-distributed"}, "runtimePatches": [patch]}) == [
        ("trainjob.patch_manager", f"{base}.manager", E),
        ("trainjob.patch_job", f"{rjobs}[0].name", E),
        ("trainjob.patch_env", f"{containers}[0].env", E),
        ("trainjob.patch_container", f"{containers}[1].name", E),
    ]


def test_runtime_webhook() -> None:
    runtime = TrainingRuntime.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainingRuntime",
            "metadata": {"name": "r"},
            "spec": {
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {
                                "name": "node",
                                "replicas": 2,
                                "dependsOn": [{"name": "x", "status": "Ready"}],
                                "template": {
                                    "metadata": {
                                        "labels": {
                                            "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                        }
                                    },
                                    "spec": {
                                        "template": {"spec": {"containers": [{"name": "main"}]}}
                                    },
                                },
                            }
                        ]
                    }
                }
            },
        }
    )
    base = "spec.template.spec.replicatedJobs[0]"
    assert [(f.code, f.path) for f in runtime_findings(runtime)] == [
        ("trainjob.runtime_replicas", f"{base}.replicas"),
        ("trainjob.runtime_container", f"{base}.template.spec.template.spec.containers"),
        ("trainjob.runtime_depends_first", f"{base}.dependsOn"),
    ]


def test_env_injection_targets_must_exist() -> None:
    runtime = TrainingRuntime.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainingRuntime",
            "metadata": {"name": "inj", "namespace": "default"},
            "spec": {
                "mlPolicy": {
                    "torch": {
                        "envInjection": {
                            "targets": [{"jobName": "node", "containerNames": ["preflight"]}]
                        }
                    }
                },
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {
                                "name": "node",
                                "template": {
                                    "metadata": {
                                        "labels": {
                                            "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                        }
                                    },
                                    "spec": {
                                        "template": {
                                            "spec": {"containers": [{"name": "node", "image": "i"}]}
                                        }
                                    },
                                },
                            }
                        ]
                    }
                },
            },
        }
    )
    job = TrainJob.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "tj"},
            "spec": {"runtimeRef": {"name": "inj", "kind": "TrainingRuntime"}},
        }
    )
    assert [(f.code, f.path) for f in trainjob_findings(job, runtime)] == [
        ("trainjob.env_injection_target", "spec.runtimeRef")
    ]


def test_a_name_too_long_for_jobsets_pod_names() -> None:
    name = "a" * 40  # <name>-node-0-11-abcde: 40 + 16 characters fit in 63; 48 + 16 do not
    spec = {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 12}}
    assert _findings(spec, name) == []
    found = _findings(spec, "a" * 48)
    assert found == [("trainjob.pod_name_length", "metadata.name", E)]
