"""MSJob 2022 (mindspore.gitee.com/v1): the worked values (§2B.3) literally, Services, rules."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.expand import expand_pods
from tests.support.paths import DATA
from trainjobs.check import run
from trainjobs.check.rules import RULES
from trainjobs.frameworks.mindspore_v2 import FRAMEWORK as MS2
from trainjobs.frameworks.mindspore_v2 import MSJobV2, service_host_var
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import load_path

SAMPLES = sorted((DATA / "ms-operator" / "kubebuilder-v1").glob("*.yaml"))
DATAPARALLEL = DATA / "ms-operator" / "kubebuilder-v1" / "ms_wide_deep_dataparallel.yaml"

# The reference's worker-1 env; MS_SCHED_HOST was the Service's ClusterIP (10.96.140.23).
WORKED_WORKER_1_ENV: list[dict[str, Any]] = [
    {"name": "GLOG_v", "value": "1"},
    # Deviation: the kubelet expands the scheduler Service's environment variable to that IP.
    {"name": "MS_SCHED_HOST", "value": "$(MS_WIDEDEEP_DATAPARALLEL_SCHEDULER_0_SERVICE_HOST)"},
    {"name": "MS_NODE_ID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    {"name": "MS_SCHED_PORT", "value": "2222"},
    {"name": "MS_SERVER_NUM", "value": "0"},
    {"name": "MS_WORKER_NUM", "value": "4"},
    {"name": "MS_ROLE", "value": "MS_WORKER"},
]
LABELS_WORKER_1 = {
    "training.kubeflow.org/operator-name": "msjob-controller",
    "group-name": "mindspore.gitee.com",
    "training.kubeflow.org/job-name": "ms-widedeep-dataparallel",
    "job-name": "ms-widedeep-dataparallel",
    "training.kubeflow.org/replica-type": "worker",
    "replica-type": "worker",
    "training.kubeflow.org/replica-index": "1",
    "replica-index": "1",
}


def sample(path: Path = DATAPARALLEL) -> MSJobV2:
    (entry,) = load_path(path).jobs
    assert isinstance(entry.job, MSJobV2)
    return entry.job


def objects(job: MSJobV2) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(MS2, MS2.default(job))}


def test_worked_example_worker_1() -> None:
    pod = objects(sample())[("Pod", "ms-widedeep-dataparallel-worker-1")]
    assert pod["metadata"] == {
        "name": "ms-widedeep-dataparallel-worker-1",
        "namespace": "default",
        "labels": LABELS_WORKER_1,
    }
    (container,) = pod["spec"]["containers"]
    assert container["env"] == WORKED_WORKER_1_ENV
    assert container["ports"] == [{"name": "msjob-port", "containerPort": 2222}]
    assert pod["spec"]["restartPolicy"] == "Never"


def test_the_scheduler_and_its_clusterip_service() -> None:
    found = objects(sample())
    scheduler = found[("Pod", "ms-widedeep-dataparallel-scheduler-0")]
    env = scheduler["spec"]["containers"][0]["env"]
    assert env[1] == {
        "name": "MS_SCHED_HOST",
        "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
    }
    assert env[-1] == {"name": "MS_ROLE", "value": "MS_SCHED"}
    service = found[("Service", "ms-widedeep-dataparallel-scheduler-0")]
    assert "clusterIP" not in service["spec"]  # a ClusterIP Service, not headless
    assert service["spec"]["ports"] == [{"name": "msjob-port", "port": 2222}]
    assert service["spec"]["selector"] == scheduler["metadata"]["labels"]
    assert [k for k in found if k[0] == "Service"] == [("Service", service["metadata"]["name"])]
    assert service_host_var(service["metadata"]["name"]) in WORKED_WORKER_1_ENV[1]["value"]


def test_parameter_servers_count_and_role() -> None:
    found = objects(sample(DATAPARALLEL.with_name("ms_wide_deep_ps_distribute.yaml")))
    env = {
        e["name"]: e.get("value")
        for e in found[("Pod", "ms-widedeep-ps-distribute-ps-1")]["spec"]["containers"][0]["env"]
    }
    assert (env["MS_SERVER_NUM"], env["MS_WORKER_NUM"], env["MS_ROLE"]) == ("2", "4", "MS_PSERVER")


def test_without_a_scheduler_no_env_is_injected() -> None:
    found = objects(sample(DATAPARALLEL.with_name("ms_wide_deep_standalone.yaml")))
    assert list(found) == [("Pod", "ms-widedeep-standalone-worker-0")]
    (container,) = found[("Pod", "ms-widedeep-standalone-worker-0")]["spec"]["containers"]
    assert "env" not in container


def test_defaults_on_the_operator_target() -> None:
    manifest = MS2.operator_manifest(MS2.default(sample(SAMPLES[-1])))
    spec = manifest["spec"]
    assert spec["runPolicy"] == {"cleanPodPolicy": "Running"}
    assert spec["successPolicy"] == ""
    worker = spec["msReplicaSpecs"]["Worker"]
    assert (worker["replicas"], worker["restartPolicy"]) == (1, "Never")


def test_lower_case_types_are_renamed_and_rules_apply() -> None:
    job = sample()
    specs = dict(job.spec.ms_replica_specs)
    scheduler = specs.pop("Scheduler")
    template = {**scheduler.template}
    specs["scheduler"] = scheduler.model_copy(update={"replicas": 2, "template": template})
    worker = specs["Worker"]
    worker_spec = {**worker.template["spec"], "enableServiceLinks": False}
    specs["Worker"] = worker.model_copy(update={"template": {"spec": worker_spec}})
    broken = job.model_copy(
        update={"spec": job.spec.model_copy(update={"ms_replica_specs": specs})}
    )
    defaulted = MS2.default(broken)
    assert isinstance(defaulted, MSJobV2)
    assert sorted(defaulted.spec.ms_replica_specs) == ["Scheduler", "Worker"]
    assert [f.render() for f in MS2.validate(defaulted)] == [
        "error: spec.msReplicaSpecs.Scheduler.replicas: a MindSpore cluster has one scheduler; "
        "the workers find it by its Service (got 2); fix: set Scheduler.replicas to 1",
        "error: spec.msReplicaSpecs.Worker.template.spec.enableServiceLinks: MS_SCHED_HOST is "
        "taken from the scheduler Service's environment variable, which Kubernetes gives only "
        "pods with service links (got false); fix: remove enableServiceLinks: false",
    ]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("target", ["operator", "pods"])
def test_every_upstream_sample_is_accepted_and_renders(path: Path, target: str) -> None:
    # The samples mount the node's checkout of the scripts (a hostPath): a privileged
    # namespace's job. The check rules have tests of their own.
    stack = replace(load_path(path), ignore=("pss.baseline.host_path",))
    rendering = run(stack, target=target)  # type: ignore[arg-type]
    kinds = {m["kind"] for m in rendering.manifests}
    if target == "operator":
        assert kinds == {"MSJob"}
    else:
        has_scheduler = "Scheduler" in sample(path).spec.ms_replica_specs
        assert kinds == ({"Pod", "Service"} if has_scheduler else {"Pod"})
    assert [f for f in rendering.findings if RULES.get(f.code) is None] == []


def test_the_operator_target_passes_upstreams_own_crd() -> None:
    deploy = DATA / "ms-operator" / "kubebuilder-v1" / "deploy" / "ms-operator.yaml"
    (crd,) = [d for d in load_all(deploy.read_text()) if d["kind"] == "CustomResourceDefinition"]
    (version,) = crd["spec"]["versions"]
    validator = jsonschema.Draft7Validator(version["schema"]["openAPIV3Schema"])
    for path in SAMPLES:
        manifest = MS2.operator_manifest(MS2.default(sample(path)))
        assert [e.message for e in validator.iter_errors(manifest)] == [], path.name
