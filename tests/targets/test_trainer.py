"""The trainer target: TrainJob + ClusterTrainingRuntime (Trainer v2.3.0) from v1 jobs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.cli import main
from trainjobs.errors import SpecError
from trainjobs.platform import API_VERSION
from trainjobs.render import UnitRef
from trainjobs.spec import parse_documents, parse_stack

CONTAINER = {
    "name": "pytorch",
    "image": "example/ddp:1.0",
    "command": ["torchrun", "train.py"],
    "env": [{"name": "EPOCHS", "value": "3"}],
    "resources": {"limits": {"nvidia.com/gpu": 2}},
}
TEMPLATE = {
    "metadata": {"labels": {"team": "vision"}},
    "spec": {"containers": [CONTAINER], "nodeSelector": {"pool": "a100"}},
}
PYTORCHJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "tj", "namespace": "default"},
    "spec": {
        "nprocPerNode": "2",
        "runPolicy": {"activeDeadlineSeconds": 3600},
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": TEMPLATE},
            "Worker": {"replicas": 1, "template": TEMPLATE},
        },
    },
}


def _render(doc: dict[str, Any], *extra: dict[str, Any]) -> list[dict[str, Any]]:
    return run(parse_documents([*extra, doc]), target="trainer").manifests


def _errors(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        run(parse_documents([doc]), target="trainer")
    return [f.render() for f in err.value.errors]


def test_a_pytorchjob_becomes_a_runtime_and_a_trainjob() -> None:
    runtime, trainjob = _render(PYTORCHJOB)
    assert runtime == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {
            "name": "default-tj",
            "labels": {"trainer.kubeflow.org/framework": "torch"},
        },
        "spec": {
            "mlPolicy": {"numNodes": 2, "torch": {}},
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
                                        "metadata": {"labels": {"team": "vision"}},
                                        "spec": {
                                            "containers": [{**CONTAINER, "name": "node"}],
                                            "nodeSelector": {"pool": "a100"},
                                            "restartPolicy": "OnFailure",
                                        },
                                    }
                                },
                            },
                        }
                    ]
                }
            },
        },
    }
    assert trainjob == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "tj", "namespace": "default"},
        "spec": {
            "runtimeRef": {
                "name": "default-tj",
                "apiGroup": "trainer.kubeflow.org",
                "kind": "ClusterTrainingRuntime",
            },
            "trainer": {"numNodes": 2, "numProcPerNode": 2},
            "activeDeadlineSeconds": 3600,
        },
    }


def test_gang_becomes_the_runtimes_pod_group_policy() -> None:
    job = copy.deepcopy(PYTORCHJOB)
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"queue": "research"}
    job["trainjobs"] = {"gang": "volcano"}
    runtime, _ = _render(job)
    assert runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
    assert runtime["spec"]["template"]["metadata"] == {
        "annotations": {"scheduling.volcano.sh/queue-name": "research"}
    }
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"scheduleTimeoutSeconds": 90}
    job["trainjobs"] = {"gang": "scheduler-plugins"}
    runtime, _ = _render(job)
    assert runtime["spec"]["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 90}}
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": 1}
    findings = run(parse_documents([job]), target="trainer").findings
    assert [f.render() for f in findings] == [
        "advice: jobs[0].spec.runPolicy.schedulingPolicy.minAvailable: Trainer v2 gangs every "
        "pod of the TrainJob; minAvailable is ignored (got 1); fix: remove minAvailable, or use "
        "the operator or pods target"
    ]


def test_what_trainer_cannot_express_is_an_error() -> None:
    job = copy.deepcopy(PYTORCHJOB)
    job["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 2}
    job["spec"]["nprocPerNode"] = "gpu"
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"] = {
        "spec": {"containers": [{**CONTAINER, "image": "example/master:1.0"}]}
    }
    assert _errors(job) == [
        "error: jobs[0].spec.pytorchReplicaSpecs.Master.template.spec: Trainer v2 starts "
        "every node from one pod template, but the Master's differs from the Worker's; fix: "
        "give Master the Worker's pod spec, or use the operator or pods target",
        "error: jobs[0].spec.nprocPerNode: Trainer v2.3 takes a number of processes per node, "
        "or none for auto (one per GPU, else per CPU) (got 'gpu'); fix: write a number, e.g. "
        "'4', or remove it",
    ]


def test_an_elastic_job_runs_fixed_size_and_is_told_so() -> None:
    job = copy.deepcopy(PYTORCHJOB)
    job["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 4}
    rendering = run(parse_documents([job]), target="trainer")
    assert rendering.manifests[1]["spec"]["trainer"]["numNodes"] == 2
    assert [f.render() for f in rendering.findings] == [
        "warning: jobs[0].spec.elasticPolicy: Trainer v2.3 runs a fixed number of nodes (its "
        "torch policy has no elastic mode): the TrainJob runs on 2 nodes, not 1 to 4 (got "
        "'1:4'); fix: set the replicas you want, or use the operator or pods target to keep "
        "elastic training"
    ]


def test_kinds_without_the_target_say_which_they_have() -> None:
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "t:1"}]}}
                }
            }
        },
    }
    # The target comes from --target, which the finding names: the job's own
    # trainjobs.target, which it does not set, would send the user to the wrong place.
    assert _errors(tfjob) == [
        "error: jobs[0]: TFJob cannot be rendered to target 'trainer', which --target gives "
        "every job (got 'trainer'); fix: render this job without --target, or with one of: "
        "operator, pods"
    ]
    with pytest.raises(SpecError) as err:
        run(parse_stack({"trainjobs:target": "trainer", "trainjobs:jobs": [tfjob]}))
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0]: TFJob cannot be rendered to target 'trainer', the stack's "
        "trainjobs:target, as the job names none (got 'trainer'); fix: give the job its own "
        "trainjobs: {target: …}, one of: operator, pods"
    ]
    own = {**tfjob, "trainjobs": {"target": "trainer"}}
    with pytest.raises(SpecError) as err:
        run(parse_documents([own]))
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0].trainjobs.target: TFJob cannot be rendered to target 'trainer' (got "
        "'trainer'); fix: use one of: operator, pods"
    ]


def test_an_mpijob_keeps_its_launcher_and_waits_for_workers() -> None:
    container = {"name": "mpi", "image": "horovod/horovod:0.28.1"}
    replica = {"template": {"spec": {"containers": [container]}}}
    mpijob: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "ml"},
        "spec": {
            "slotsPerWorker": 2,
            "launcherCreationPolicy": "WaitForWorkersReady",
            "mpiReplicaSpecs": {"Launcher": replica, "Worker": {**replica, "replicas": 3}},
        },
    }
    runtime, trainjob = _render(mpijob)
    assert runtime["spec"]["mlPolicy"] == {
        "numNodes": 3,
        "mpi": {
            "numProcPerNode": 2,
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": "/root/.ssh",
            "runLauncherAsNode": False,
        },
    }
    node, launcher = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert (node["name"], launcher["name"]) == ("node", "launcher")
    assert launcher["dependsOn"] == [{"name": "node", "status": "Ready"}]
    worker = node["template"]["spec"]["template"]["spec"]["containers"][0]
    assert worker == {**container, "name": "node", "command": ["/usr/sbin/sshd", "-De"]}
    assert trainjob["spec"]["trainer"] == {"numNodes": 3}
    intel = copy.deepcopy(mpijob)
    intel["spec"]["mpiImplementation"] = "Intel"
    assert _errors(intel) == [
        "error: jobs[0].spec.mpiImplementation: Trainer v2.3 launches OpenMPI only (got "
        "'Intel'); fix: use OpenMPI, or the operator or pods target"
    ]


def test_a_trainjob_waits_for_the_trainer_install_in_its_stack() -> None:
    trainer = {"apiVersion": API_VERSION, "kind": "Trainer", "metadata": {"name": "trainer"}}
    rendering = run(parse_documents([trainer, PYTORCHJOB]), target="trainer")
    (job,) = rendering.jobs
    assert job.depends_on == (UnitRef("operator", "kubeflow-system/trainer"),)
    kinds = [o.manifest["kind"] for o in rendering.objects]
    assert kinds.index("ClusterTrainingRuntime") < kinds.index("TrainJob")
    assert not [f for f in rendering.findings if f.code.startswith("schema")]


def test_frameworks_lists_the_trainer_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frameworks"]) == 0
    table = capsys.readouterr().out.partition("\n\n")[0]
    rows = {line.split()[0]: line.split()[3] for line in table.splitlines()}
    assert rows["pytorch"] == "operator,pods,trainer"
    assert rows["mpi"] == "operator,pods,trainer"
    assert rows["tensorflow"] == "operator,pods"
