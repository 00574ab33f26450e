"""Each ML policy, gang policy and TrainJob field of Trainer v2.3.0 through jobset_manifests
(tests/support/jobset.py: the framework's JobSetPlan as the jobset target writes it)
(kubeflow-operators.md §7.3, §7.4), and what the JobSet expansion makes of them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from tests.support.jobset import jobset_manifests
from trainjobs.errors import Severity
from trainjobs.frameworks.trainjob import (
    ClusterTrainingRuntime,
    TrainingRuntime,
    TrainJob,
    resolve_runtime,
)
from trainjobs.k8s.generated import parse
from trainjobs.targets.jobset_pods import pods_findings, pods_manifests


def _job(spec: dict[str, Any], name: str = "tj", **meta: Any) -> TrainJob:
    return TrainJob.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "ml", **meta},
            "spec": spec,
        }
    )


def _render(job: TrainJob, *declared: Any) -> list[dict[str, Any]]:
    runtime, findings = resolve_runtime(job, declared)
    assert runtime is not None, findings
    objects, findings = jobset_manifests(job, runtime)
    assert [f for f in findings if f.severity is Severity.ERROR] == []
    return objects


def _node(jobset: dict[str, Any], rjob: str = "node") -> dict[str, Any]:
    for entry in jobset["spec"]["replicatedJobs"]:
        if entry["name"] == rjob:
            container: dict[str, Any] = entry["template"]["spec"]["template"]["spec"]["containers"][
                0
            ]
            return container
    raise AssertionError(rjob)


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def test_auto_nproc_without_gpus_is_the_cpu_count_and_user_env_comes_first() -> None:
    job = _job(
        {
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {
                "numNodes": 3,
                "env": [{"name": "A", "value": "1"}],
                "resourcesPerNode": {"requests": {"cpu": "2500m"}, "limits": {"cpu": 4}},
                "image": "me/train:1",
                "command": ["torchrun", "t.py"],
            },
        }
    )
    node = _node(_render(job)[-1])
    assert [e["name"] for e in node["env"]][:3] == ["A", "PET_NNODES", "PET_NPROC_PER_NODE"]
    # requests first, rounded up as Quantity.Value does
    assert _env(node)["PET_NPROC_PER_NODE"] == "3"
    assert _env(node)["PET_MASTER_ADDR"] == "tj-node-0-0.tj"
    assert node["image"] == "me/train:1" and node["command"] == ["torchrun", "t.py"]
    assert node["resources"] == {"requests": {"cpu": "2500m"}, "limits": {"cpu": "4"}}


def test_num_proc_per_node_wins_over_auto() -> None:
    job = _job({"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numProcPerNode": 8}})
    assert _env(_node(_render(job)[-1]))["PET_NPROC_PER_NODE"] == "8"


def test_no_trainer_section_means_no_torch_env() -> None:
    # The torch plugin configures the node container only when the TrainJob has a trainer.
    node = _node(_render(_job({"runtimeRef": {"name": "torch-distributed"}}))[-1])
    assert "env" not in node and "ports" not in node


def test_torchtune_command_rule() -> None:
    job = _job(
        {
            "runtimeRef": {"name": "torchtune-llama3.2-1b"},
            "trainer": {"command": ["tune", "run"], "numProcPerNode": 2},
        }
    )
    jobset = _render(job)[-1]
    node = _node(jobset)
    assert "PET_MASTER_ADDR" not in _env(node) and _env(node)["PET_NNODES"] == "1"
    assert node["command"] == [
        "tune",
        "run",
        "--rdzv_endpoint=tj-node-0-0.tj:29500",
        "full_finetune_distributed",
        "--config",
        "llama3_2/1B_full",
        "output_dir=/workspace/output",
        "tokenizer.path=/workspace/model/original/tokenizer.model",
        "checkpointer.checkpoint_dir=/workspace/model",
    ]
    assert [r["name"] for r in jobset["spec"]["replicatedJobs"]] == [
        "dataset-initializer",
        "model-initializer",
        "node",
    ]


def test_mpi_hostfile_secret_and_launcher() -> None:
    job = _job(
        {
            "runtimeRef": {"name": "deepspeed-distributed"},
            "trainer": {"numNodes": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}},
        },
        name="ds",
    )
    secret, config_map, jobset = _render(job)
    assert config_map["metadata"]["name"] == "ds-mpi-hostfile"
    # runLauncherAsNode: 2 node pods + the launcher, in the runtime's job order
    assert config_map["data"] == {
        "hostfile": "ds-node-0-0.ds slots=4\nds-node-0-1.ds slots=4\nds-launcher-0-0.ds slots=4\n"
    }
    assert secret["metadata"]["name"] == "ds-mpi-ssh-auth" and secret["immutable"] is True
    assert secret["type"] == "kubernetes.io/ssh-auth" and "data" not in secret
    # never key material: only placeholders a Pulumi secret replaces at apply time
    assert all(parse(v) is not None for v in secret["stringData"].values())
    assert "PRIVATE KEY" not in json.dumps([secret, config_map, jobset])
    launcher = _node(jobset, "launcher")
    assert _env(launcher)["OMPI_MCA_orte_set_default_slots"] == "4"
    assert {m["mountPath"] for m in launcher["volumeMounts"]} == {"/home/mpiuser/.ssh", "/etc/mpi"}
    nodes = next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == "node")
    assert nodes["template"]["spec"]["parallelism"] == 2
    pod_names = [m["metadata"]["name"] for m in pods_manifests(jobset)]
    assert pod_names == ["ds", "ds-node-0", "ds-launcher-0"]


def test_mpi_runtime_without_launcher_as_node() -> None:
    runtime = ClusterTrainingRuntime.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "mpi"},
            "spec": {
                "mlPolicy": {"numNodes": 1, "mpi": {"numProcPerNode": 2}},
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {
                                "name": "launcher",
                                "template": {
                                    "metadata": {"labels": {ANCESTOR: "trainer"}},
                                    "spec": {"template": {"spec": {"containers": [NODE]}}},
                                },
                            },
                            {
                                "name": "node",
                                "template": {
                                    "spec": {"template": {"spec": {"containers": [NODE]}}}
                                },
                            },
                        ]
                    }
                },
            },
        }
    )
    job = _job({"runtimeRef": {"name": "mpi"}, "trainer": {"numNodes": 2}}, name="pi")
    _, config_map, _ = _render(job, runtime)
    assert config_map["data"]["hostfile"] == "pi-node-0-0.pi slots=2\npi-node-0-1.pi slots=2\n"


ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
NODE = {"name": "node", "image": "img"}


def test_jax_and_xgboost_env() -> None:
    jax = _node(
        _render(_job({"runtimeRef": {"name": "jax-distributed"}, "trainer": {"numNodes": 2}}))[-1]
    )
    assert _env(jax)["JAX_NUM_PROCESSES"] == "2"
    assert _env(jax)["JAX_COORDINATOR_ADDRESS"] == "tj-node-0-0.tj:29500"
    xgb = _job(
        {
            "runtimeRef": {"name": "xgboost-distributed"},
            "trainer": {"numNodes": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}}},
        }
    )
    env = _env(_node(_render(xgb)[-1]))
    assert env["DMLC_NUM_WORKER"] == "6" and env["DMLC_TRACKER_URI"] == "tj-node-0-0.tj"


def test_initializer_env_secret_and_replicas() -> None:
    job = _job(
        {
            "runtimeRef": {"name": "torchtune-llama3.2-1b"},
            "initializer": {
                "dataset": {"storageUri": "hf://me/data", "secretRef": {"name": "hf"}},
                "model": {"env": [{"name": "X", "value": "y"}]},
            },
        }
    )
    jobset = _render(job)[-1]
    dataset = _node(jobset, "dataset-initializer")
    assert _env(dataset)["STORAGE_URI"] == "hf://me/data"  # replaces the runtime's value
    assert dataset["envFrom"] == [{"secretRef": {"name": "hf"}}]
    assert _env(_node(jobset, "model-initializer")) == {
        "STORAGE_URI": "hf://meta-llama/Llama-3.2-1B-Instruct",
        "X": "y",
    }
    assert jobset["spec"]["volumeClaimPolicies"][0]["templates"][0]["metadata"]["name"] == (
        "initializer"
    )
    pods = pods_manifests(jobset)
    assert pods[0]["kind"] == "PersistentVolumeClaim"
    assert pods[0]["metadata"]["name"] == "initializer-tj"
    trainer_job = pods[-1]["spec"]["template"]["spec"]
    assert {"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer-tj"}} in (
        trainer_job["volumes"]
    )
    warnings = pods_findings(jobset, "jobset.spec.")
    assert [f.code for f in warnings] == ["trainjob.pods_depends_on"]
    assert warnings[0].path == "jobset.spec.replicatedJobs[2].dependsOn"


def test_runtime_patches_merge_and_label_the_jobset() -> None:
    job = _job(
        {
            "runtimeRef": {"name": "torch-distributed"},
            "runtimePatches": [
                {
                    "manager": "example.io/platform",
                    "trainingRuntimeSpec": {
                        "template": {
                            "metadata": {"labels": {"team": "ml"}},
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "spec": {
                                                "template": {
                                                    "metadata": {"labels": {"pool": "a"}},
                                                    "spec": {
                                                        "nodeSelector": {"gpu": "h100"},
                                                        "containers": [
                                                            {
                                                                "name": "node",
                                                                "volumeMounts": [
                                                                    {"name": "d", "mountPath": "/d"}
                                                                ],
                                                            }
                                                        ],
                                                    },
                                                }
                                            }
                                        },
                                    }
                                ]
                            },
                        }
                    },
                }
            ],
        }
    )
    jobset = _render(job)[-1]
    assert jobset["metadata"]["labels"] == {"team": "ml"}
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"] == {"labels": {"pool": "a"}}
    assert pod["spec"]["nodeSelector"] == {"gpu": "h100"}
    assert pod["spec"]["containers"] == [
        {
            "name": "node",
            "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
            "volumeMounts": [{"name": "d", "mountPath": "/d"}],
        }
    ]


def test_coscheduling_and_volcano_pod_groups() -> None:
    def runtime(policy: dict[str, Any], annotations: dict[str, str]) -> TrainingRuntime:
        return TrainingRuntime.model_validate(
            {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainingRuntime",
                "metadata": {"name": "gang", "namespace": "ml"},
                "spec": {
                    "mlPolicy": {"torch": {}},
                    "podGroupPolicy": policy,
                    "template": {
                        "metadata": {"annotations": annotations},
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": "node",
                                    "template": {
                                        "metadata": {"labels": {ANCESTOR: "trainer"}},
                                        "spec": {
                                            "template": {
                                                "spec": {
                                                    "priorityClassName": "high",
                                                    "containers": [NODE],
                                                }
                                            }
                                        },
                                    },
                                }
                            ]
                        },
                    },
                },
            }
        )

    spec = {
        "runtimeRef": {"name": "gang", "kind": "TrainingRuntime"},
        "trainer": {
            "numNodes": 4,
            "resourcesPerNode": {"requests": {"cpu": "500m", "memory": "3Gi"}},
        },
    }
    group, jobset = _render(_job(spec), runtime({"coscheduling": {}}, {}))
    assert group == {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "tj", "namespace": "ml"},
        "spec": {
            "minMember": 4,
            "minResources": {"cpu": "2", "memory": "12Gi"},
            "scheduleTimeoutSeconds": 60,
        },
    }
    labels = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
    assert labels["labels"] == {"scheduling.x-k8s.io/pod-group": "tj"}
    queue = {"scheduling.volcano.sh/queue-name": "research"}
    group, jobset = _render(_job(spec), runtime({"volcano": {}}, queue))
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"]["queue"] == "research" and group["spec"]["priorityClassName"] == "high"
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
    assert pod["annotations"] == {"scheduling.k8s.io/group-name": "tj"}
    assert jobset["metadata"]["annotations"] == queue


def test_suspend_reaches_every_job() -> None:
    jobset = _render(_job({"runtimeRef": {"name": "torch-distributed"}, "suspend": True}))[-1]
    assert jobset["spec"]["suspend"] is True
    assert all(j["spec"]["suspend"] is True for j in pods_manifests(jobset) if j["kind"] == "Job")


def test_multikueue_and_deadline() -> None:
    job = _job(
        {"runtimeRef": {"name": "torch-distributed"}, "managedBy": "kueue.x-k8s.io/multikueue"}
    )
    runtime, _ = resolve_runtime(job)
    assert runtime is not None
    objects, findings = jobset_manifests(job, runtime)
    assert objects == [] and [(f.code, f.path) for f in findings] == [
        ("trainjob.managed_by", "spec.managedBy")
    ]
    job = _job({"runtimeRef": {"name": "torch-distributed"}, "activeDeadlineSeconds": 60})
    objects, findings = jobset_manifests(job, runtime)
    assert objects and [(f.code, f.severity) for f in findings] == [
        ("trainjob.deadline_controller", Severity.WARNING)
    ]


@pytest.mark.parametrize(
    ("field", "replacement"),
    [("podSpecOverrides", "runtimePatches"), ("podTemplateOverrides", "runtimePatches")],
)
def test_older_override_fields_are_refused_naming_runtime_patches(
    field: str, replacement: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        _job({"runtimeRef": {"name": "torch-distributed"}, field: [{"targetJobs": []}]})
    (error,) = caught.value.errors()
    assert error["loc"] == ("spec", field)
    assert replacement in error["msg"] and "removed" in error["msg"]


def test_unknown_runtime_names_those_known() -> None:
    job = _job({"runtimeRef": {"name": "torch-distributd"}})
    runtime, findings = resolve_runtime(job)
    assert runtime is None
    (finding,) = findings
    assert finding.path == "spec.runtimeRef.name" and "torch-distributed" in finding.hint
    job = _job({"runtimeRef": {"name": "mine", "kind": "TrainingRuntime"}})
    other = TrainingRuntime.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainingRuntime",
            "metadata": {"name": "mine", "namespace": "elsewhere"},
            "spec": {"mlPolicy": {"torch": {}}},
        }
    )
    runtime, findings = resolve_runtime(job, [other])
    assert runtime is None and "namespace 'elsewhere'" in findings[0].hint


def test_an_exported_trainjob_with_patch_times_is_input() -> None:
    from trainjobs.k8s.yamlio import load_all

    (document,) = load_all(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        "metadata: {name: tj, uid: x, resourceVersion: '1'}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n"
        "  runtimePatches: [{manager: kueue.x-k8s.io/kueue, time: 2026-01-01T00:00:00Z}]\n"
        "status: {conditions: []}\n"
    )
    job = TrainJob.model_validate(document)
    assert job.to_manifest()["spec"]["runtimePatches"] == [
        {"manager": "kueue.x-k8s.io/kueue", "time": "2026-01-01T00:00:00Z"}
    ]
