"""Gang scheduling on both targets, for every kind, and the coherence findings."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainjobs.check import run
from trainjobs.check.rules.registry import RULES
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import dump_all
from trainjobs.platform import API_VERSION
from trainjobs.spec import parse_documents


def _container(name: str, cpu: str = "2", memory: str = "4Gi") -> dict[str, Any]:
    return {
        "name": name,
        "image": "example/trainer:1.0",
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }


def _tfjob(policy: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    def replica(count: int) -> dict[str, Any]:
        return {"replicas": count, "template": {"spec": {"containers": [_container("tensorflow")]}}}

    spec: dict[str, Any] = {"tfReplicaSpecs": {"Chief": replica(1), "Worker": replica(2)}}
    if policy is not None:
        spec["runPolicy"] = {"schedulingPolicy": policy}
    doc: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": spec,
    }
    if options:
        doc["trainjobs"] = options
    return doc


def _mpijob(policy: dict[str, Any] | None = None, workers: int = 2, **spec: Any) -> dict[str, Any]:
    def replica(count: int) -> dict[str, Any]:
        return {
            "replicas": count,
            "template": {"spec": {"containers": [_container("mpi", "1", "1Gi")]}},
        }

    body: dict[str, Any] = {
        "mpiReplicaSpecs": {"Launcher": replica(1), "Worker": replica(workers)},
        **spec,
    }
    if policy is not None:
        body["runPolicy"] = {"schedulingPolicy": policy}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "ml", "annotations": {"team": "hpc"}},
        "spec": body,
    }


def _operator(kind: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": "op"}, "spec": spec}


def _objects(docs: list[dict[str, Any]], target: str | None = None) -> list[dict[str, Any]]:
    return run(parse_documents(docs), target=target).manifests  # type: ignore[arg-type]


def _findings(docs: list[dict[str, Any]], target: str | None = None) -> list[str]:
    findings = run(parse_documents(docs), target=target).findings  # type: ignore[arg-type]
    # The operators' advice that Volcano must be installed is tested with them, the
    # check rules' advice (requests, ttl …) in tests/check/rules.
    other = {"operator.gang_prerequisite", *RULES.codes()}
    return [f.render() for f in findings if f.code not in other]


def _errors(docs: list[dict[str, Any]], target: str | None = None) -> list[str]:
    with pytest.raises(SpecError) as err:
        run(parse_documents(docs), target=target)  # type: ignore[arg-type]
    return [f.render() for f in err.value.errors]


def _pod(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == name)


def test_volcano_on_the_pods_target_is_what_the_training_operator_creates() -> None:
    objects = _objects([_tfjob({"queue": "research"}, gang="volcano")], target="pods")
    (group,) = [o for o in objects if o["kind"] == "PodGroup"]
    assert group == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "minMember": 3,
            "queue": "research",
            "minResources": {"cpu": "6", "memory": "12Gi"},
        },
    }
    worker = _pod(objects, "mnist-worker-1")
    assert worker["spec"]["schedulerName"] == "volcano"
    assert worker["metadata"]["annotations"] == {
        "scheduling.k8s.io/group-name": "mnist",
        "volcano.sh/task-spec": "worker",
    }
    assert (
        _pod(objects, "mnist-chief-0")["metadata"]["annotations"]["volcano.sh/task-spec"] == "chief"
    )
    # The PodGroup exists before the pods that belong to it.
    kinds = [o["kind"] for o in objects]
    assert kinds.index("PodGroup") < kinds.index("Pod")


def test_volcano_queue_defaults_to_default_for_training_operator_kinds() -> None:
    objects = _objects([_tfjob({"minAvailable": 2}, gang="volcano")], target="pods")
    (group,) = [o for o in objects if o["kind"] == "PodGroup"]
    assert group["spec"] == {
        "minMember": 2,
        "queue": "default",
        "minResources": {"cpu": "4", "memory": "8Gi"},
    }


def test_scheduler_plugins_labels_the_pods_and_keeps_the_timeout() -> None:
    policy = {"scheduleTimeoutSeconds": 120}
    objects = _objects([_tfjob(policy, gang="scheduler-plugins")], target="pods")
    (group,) = [o for o in objects if o["kind"] == "PodGroup"]
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["spec"] == {
        "minMember": 3,
        "minResources": {"cpu": "6", "memory": "12Gi"},
        "scheduleTimeoutSeconds": 120,
    }
    worker = _pod(objects, "mnist-worker-0")
    assert worker["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    assert worker["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "mnist"
    assert "annotations" not in worker["metadata"]


def test_mpi_gang_counts_workers_plus_launcher_and_takes_the_queue_annotation() -> None:
    job = _mpijob({}, workers=3)
    job["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] = "hpc"
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] = "mine"
    job["trainjobs"] = {"gang": "volcano"}
    objects = _objects([job], target="pods")
    (group,) = [o for o in objects if o["kind"] == "PodGroup"]
    assert group == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "pi",
            "namespace": "ml",
            "annotations": {"team": "hpc", "scheduling.volcano.sh/queue-name": "hpc"},
        },
        "spec": {"minMember": 4, "queue": "hpc", "minResources": {"cpu": "4", "memory": "4Gi"}},
    }
    worker = _pod(objects, "pi-worker-2")
    # The MPI Operator overwrites a template's scheduler and sets no task name.
    assert worker["spec"]["schedulerName"] == "volcano"
    assert worker["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "pi"}
    (launcher,) = [o for o in objects if o["kind"] == "Job"]
    template = launcher["spec"]["template"]
    assert template["spec"]["schedulerName"] == "volcano"
    assert template["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "pi"}


def test_mpi_scheduler_plugins_timeout_defaults_to_zero() -> None:
    job = _mpijob()
    job["trainjobs"] = {"gang": "scheduler-plugins"}
    (group,) = [o for o in _objects([job], target="pods") if o["kind"] == "PodGroup"]
    assert group["spec"] == {
        "minMember": 3,
        "minResources": {"cpu": "3", "memory": "3Gi"},
        "scheduleTimeoutSeconds": 0,
    }


def test_on_the_operator_target_the_operator_creates_the_podgroup() -> None:
    docs = [_operator("TrainingOperator", gangScheduler="volcano"), _tfjob({"minAvailable": 3})]
    objects = _objects(docs)
    assert not [o for o in objects if o["kind"] == "PodGroup"]
    (tfjob,) = [o for o in objects if o["kind"] == "TFJob"]
    assert tfjob["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 3}
    assert _findings(docs) == []


def test_the_mechanism_defaults_from_the_stacks_operator() -> None:
    docs = [_operator("TrainingOperator", gangScheduler="sched"), _tfjob({})]
    objects = _objects(docs, target="pods")
    (group,) = [o for o in objects if o["kind"] == "PodGroup"]
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert _pod(objects, "mnist-worker-0")["spec"]["schedulerName"] == "sched"


def test_a_policy_without_a_gang_enabled_operator_is_said() -> None:
    assert _findings([_operator("TrainingOperator"), _tfjob({"minAvailable": 3})]) == [
        "warning: jobs[0].spec.runPolicy.schedulingPolicy: operators[0] (TrainingOperator "
        "'op') runs this job without gang scheduling, so its schedulingPolicy has no effect; "
        "fix: set spec.gangScheduler on operators[0]: 'volcano', or the name of a "
        "scheduler-plugins scheduler"
    ]
    assert _findings([_tfjob({"minAvailable": 3})]) == [
        "advice: jobs[0].spec.runPolicy.schedulingPolicy: schedulingPolicy takes effect only "
        "if the cluster's operator runs with gang scheduling, and no operator in this stack "
        "runs this kind; fix: declare the operator in the stack with spec.gangScheduler, or "
        "set trainjobs.gang to say which mechanism the cluster's operator uses"
    ]
    assert _findings([_tfjob({"minAvailable": 3})], target="pods") == [
        "warning: jobs[0].spec.runPolicy.schedulingPolicy: schedulingPolicy has no effect on "
        "the pods target unless the job names a gang mechanism; fix: set trainjobs.gang: "
        "volcano or scheduler-plugins"
    ]


def test_one_gang_mechanism_per_job() -> None:
    docs = [
        _operator("TrainingOperator", gangScheduler="volcano"),
        _tfjob({}, gang="scheduler-plugins"),
    ]
    assert _errors(docs) == [
        "error: jobs[0].trainjobs.gang: the job asks for scheduler-plugins, but operators[0] "
        "(TrainingOperator 'op') gang-schedules with volcano; a job has one gang mechanism "
        "(got 'scheduler-plugins'); fix: drop trainjobs.gang, or change the operator's "
        "spec.gangScheduler"
    ]
    own = _tfjob({}, gang="volcano")
    own["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] = (
        "default-scheduler"
    )
    assert _errors([own], target="pods") == [
        "error: jobs[0].spec.tfReplicaSpecs.Worker.template.spec.schedulerName: Worker pods "
        "name their own scheduler, but only 'volcano' honours the job's volcano gang; the "
        "operator keeps the template's name, so these pods would not wait for the gang (got "
        "'default-scheduler'); fix: remove schedulerName, or set it to 'volcano'"
    ]


def test_a_kueue_queue_and_a_volcano_queue_do_not_mix() -> None:
    job = _tfjob({"queue": "research"}, gang="volcano")
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    assert _errors([job], target="pods") == [
        "error: jobs[0].spec.runPolicy.schedulingPolicy.queue: the job is queued twice: by "
        "Kueue (queue 'team-a') and by Volcano (queue 'research'); each admits it on its own "
        "quota (got 'research'); fix: drop schedulingPolicy.queue (Kueue admits, Volcano "
        "gangs), or the Kueue queue"
    ]


def test_min_available_must_fit_the_replicas() -> None:
    assert _errors([_tfjob({"minAvailable": 5}, gang="volcano")], target="pods") == [
        "error: jobs[0].spec.runPolicy.schedulingPolicy.minAvailable: the gang waits for 5 "
        "pods to start together, but the job has 3 (Chief 1 + Worker 2), so it never starts "
        "(got 5); fix: lower minAvailable to at most 3, or add replicas"
    ]
    assert _errors([_tfjob({"minAvailable": 0}, gang="volcano")]) == [
        "error: jobs[0].spec.runPolicy.schedulingPolicy.minAvailable: a gang of 0 pods "
        "schedules nothing together (got 0); fix: set minAvailable to at least 1, or remove "
        "it (default 3)"
    ]


def test_mpi_launcher_waiting_for_workers_deadlocks_a_gang_that_includes_it() -> None:
    docs = [
        _operator("MPIOperator", gangScheduler="volcano"),
        _mpijob({}, workers=4, launcherCreationPolicy="WaitForWorkersReady"),
    ]
    assert _errors(docs) == [
        "error: jobs[0].spec.runPolicy.schedulingPolicy.minAvailable: the operator creates "
        "the Launcher only once the other 4 pods are Ready, but the gang holds those pods "
        "until 5 pods exist, the Launcher among them: the job never starts (got 5); fix: set "
        "minAvailable to 4 (the pods created first), or launcherCreationPolicy: AtStartup"
    ]
    fixed = copy.deepcopy(docs)
    fixed[1]["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": 4}
    assert _findings(fixed) == []
    # On the pods target the launcher is created with the workers (it waits in an init
    # container), so the default gang is fine there.
    assert _findings([{**docs[1], "trainjobs": {"gang": "volcano"}}], target="pods") == []


def test_fields_a_mechanism_ignores_are_advice() -> None:
    findings = _findings([_tfjob({"scheduleTimeoutSeconds": 60}, gang="volcano")], "pods")
    assert findings == [
        "advice: jobs[0].spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds: a volcano "
        "PodGroup has no scheduleTimeoutSeconds; it is ignored (got 60); fix: remove "
        "scheduleTimeoutSeconds"
    ]


@settings(max_examples=15, deadline=None)
@given(
    chief=st.integers(0, 1),
    workers=st.integers(1, 5),
    extra=st.integers(0, 3),
    mechanism=st.sampled_from(["volcano", "scheduler-plugins"]),
)
def test_any_fitting_gang_renders_valid_and_identical_twice(
    chief: int, workers: int, extra: int, mechanism: str
) -> None:
    job = _tfjob({"minAvailable": max(1, chief + workers - extra)}, gang=mechanism)
    replicas = job["spec"]["tfReplicaSpecs"]
    replicas["Worker"]["replicas"] = workers
    if chief:
        replicas["Chief"]["replicas"] = 1
    else:
        del replicas["Chief"]
    first = run(parse_documents([job]), target="pods")
    pods = [o for o in first.manifests if o["kind"] == "Pod"]
    (group,) = [o for o in first.manifests if o["kind"] == "PodGroup"]
    assert group["spec"]["minMember"] <= len(pods)
    for pod in pods:
        scheduler = "volcano" if mechanism == "volcano" else "scheduler-plugins-scheduler"
        assert pod["spec"]["schedulerName"] == scheduler
    again = run(parse_documents([job]), target="pods")
    assert dump_all(first.manifests) == dump_all(again.manifests)
    assert not [f for f in first.findings if f.code.startswith("schema")]
