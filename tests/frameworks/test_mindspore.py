"""MSJob 2020 (frameworks/mindspore.py and its rules, _mindspore_rules.py): the worked example
(§2A.4) literally, the seed's fields, rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.expand import expand_pods
from tests.support.paths import DATA
from trainjobs.check import run
from trainjobs.check.rules import RULES
from trainjobs.errors import SpecError
from trainjobs.frameworks.mindspore import ENV_ORDER, MSJob
from trainjobs.frameworks.mindspore import FRAMEWORK as MS
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import load_path, parse_documents

LEGACY = DATA / "ms-operator" / "legacy-kubeflow-v1"

WORKED_WORKER_RANK_1_ENV = [
    {
        "name": "MS_CONFIG",
        "value": '{"cluster":{"master":["ms-dist-master-x7k2-0:23456"],"worker":'
        '["ms-dist-worker-x7k2-0:23456","ms-dist-worker-x7k2-1:23456"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}',
    },
    {"name": "MASTER_PORT", "value": "23456"},
    {"name": "MASTER_ADDR", "value": "ms-dist-master-x7k2-0"},
    {"name": "WORLD_SIZE", "value": "3"},
    {"name": "RANK", "value": "1"},
]


def _replica(kind: str | None, replicas: int, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "template": {"spec": {"containers": [{"name": "mindspore", "image": "ms:0.1"}]}},
        **extra,
    }
    if kind is not None:
        spec["replicaType"] = kind
    return spec


def msjob(*replicas: dict[str, Any], **spec: Any) -> MSJob:
    return MSJob.model_validate(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "MSJob",
            "metadata": {"name": "ms-dist", "namespace": "default"},
            "spec": {"replicaSpecs": list(replicas), **spec},
        }
    )


def worked_example() -> MSJob:
    # masterPort left to its default; the controller's RuntimeId stated, as in the reference.
    return msjob(_replica("MASTER", 1), _replica("WORKER", 2), RuntimeId="x7k2")


def objects(job: MSJob) -> dict[tuple[str, str], dict[str, Any]]:
    defaulted = MS.default(job)
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(MS, defaulted)}


def test_worked_example_worker_rank_1() -> None:
    pod = objects(worked_example())[("Pod", "ms-dist-worker-x7k2-1")]
    assert pod["metadata"] == {
        # Deviation: upstream appended 5 random characters to the name.
        "name": "ms-dist-worker-x7k2-1",
        "namespace": "default",
        "labels": {
            "kubeflow.org": "",
            "job_type": "WORKER",
            "runtime_id": "x7k2",
            "ms_job_name": "ms-dist",
            "task_index": "1",
        },
    }
    (container,) = pod["spec"]["containers"]
    assert container["env"] == WORKED_WORKER_RANK_1_ENV


def test_worked_example_master_and_services() -> None:
    found = objects(worked_example())
    master = found[("Pod", "ms-dist-master-x7k2-0")]
    env = {e["name"]: e["value"] for e in master["spec"]["containers"][0]["env"]}
    assert (env["MASTER_ADDR"], env["RANK"]) == ("localhost", "0")
    assert json.loads(env["MS_CONFIG"])["task"] == {"type": "master", "index": 0}
    services = sorted(name for kind, name in found if kind == "Service")
    assert services == ["ms-dist-master-x7k2-0", "ms-dist-worker-x7k2-0", "ms-dist-worker-x7k2-1"]
    worker0 = found[("Service", "ms-dist-worker-x7k2-0")]
    assert worker0["metadata"]["labels"]["task_index"] == "0"
    # Deviation: the index-0 worker Service selects the worker of rank 1 (upstream: none).
    assert worker0["spec"] == {
        "selector": {
            "kubeflow.org": "",
            "job_type": "WORKER",
            "runtime_id": "x7k2",
            "ms_job_name": "ms-dist",
            "task_index": "1",
        },
        "ports": [{"name": "ms-port", "port": 23456}],
    }


@settings(max_examples=30, deadline=None)
@given(
    workers=st.integers(min_value=0, max_value=5),
    port=st.integers(min_value=1024, max_value=65535),
)
def test_every_ms_config_host_is_a_service_selecting_exactly_one_pod(
    workers: int, port: int
) -> None:
    job = msjob(_replica("MASTER", 1, masterPort=port), _replica("WORKER", workers))
    manifests = expand_pods(MS, MS.default(job))
    pods = [m for m in manifests if m["kind"] == "Pod"]
    services = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "Service"}
    assert len(pods) == 1 + workers
    for pod in pods:
        env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
        assert [e["name"] for e in pod["spec"]["containers"][0]["env"]] == list(ENV_ORDER)
        assert env["WORLD_SIZE"] == str(1 + workers)
        hosts = [h for group in json.loads(env["MS_CONFIG"])["cluster"].values() for h in group]
        if env["MASTER_ADDR"] != "localhost":
            hosts.append(env["MASTER_ADDR"])
        for host in hosts:
            selector = services[host.split(":")[0]]["spec"]["selector"]
            matching = [p for p in pods if p["metadata"]["labels"] == selector]
            assert len(matching) == 1, host


def test_defaults_and_the_operator_target() -> None:
    manifest = MS.operator_manifest(MS.default(msjob(_replica(None, 1))))
    assert manifest["spec"] == {
        "RuntimeId": "mnfh",
        "replicaSpecs": [
            {
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "mindspore", "image": "ms:0.1"}]}},
                "masterPort": 23456,
                "replicaType": "MASTER",
            }
        ],
        "msImage": "mindspore/mindspore:v0.1.0-alpha",
        "terminationPolicy": {"master": {"replicaName": "MASTER", "replicaRank": 0}},
    }


def test_the_seeds_backend_and_master_port_are_mapped_and_warned() -> None:
    job = msjob(
        _replica("MASTER", 1),
        _replica("WORKER", 3, masterPort=30000),
        backend="tcp",
        masterPort="23457",
    )
    defaulted = MS.default(job)
    assert [f.render() for f in MS.validate(defaulted)] == [
        "warning: spec.backend: backend is not part of the MSJob API and the operator dropped "
        "it; its only rendezvous is TCP through MASTER_ADDR and MASTER_PORT, so the job gets "
        "what 'tcp' asks for and the field is left out (got 'tcp'); fix: remove spec.backend",
        "warning: spec.masterPort: masterPort belongs on each replica spec; the operator ignored "
        "it here and gave every replica 23456. trainjobs applies 23457 to each replica spec "
        "without a masterPort of its own (got '23457'); fix: move it: masterPort: 23457 on each "
        "entry of spec.replicaSpecs",
    ]
    spec = MS.operator_manifest(defaulted)["spec"]
    assert "backend" not in spec and "masterPort" not in spec
    assert [r["masterPort"] for r in spec["replicaSpecs"]] == [23457, 30000]


def test_a_backend_other_than_tcp_and_a_bad_port_are_errors() -> None:
    job = msjob(_replica("MASTER", 1), backend="nccl", masterPort="port")
    assert [(f.code, f.severity.value) for f in MS.validate(MS.default(job))] == [
        ("mindspore.backend", "error"),
        ("mindspore.master_port", "error"),
    ]


def test_the_controllers_rules() -> None:
    job = msjob(
        _replica("WORKER", 2),
        _replica("WORKER", 1),
        terminationPolicy={"master": {"replicaName": "CHIEF"}},
    )
    found = [(f.code, f.path) for f in MS.validate(MS.default(job))]
    assert found == [
        ("mindspore.replica_type_twice", "spec.replicaSpecs[1].replicaType"),
        ("mindspore.master_missing", "spec.replicaSpecs"),
        ("mindspore.termination_policy", "spec.terminationPolicy.master.replicaName"),
    ]
    two_masters = msjob(_replica("MASTER", 2))
    assert [f.code for f in MS.validate(MS.default(two_masters))] == ["mindspore.master_replicas"]


def test_template_metadata_and_scheduler_are_the_operators() -> None:
    replica = _replica("MASTER", 1)
    replica["template"]["metadata"] = {"labels": {"team": "a"}}
    replica["template"]["spec"]["schedulerName"] = "volcano"
    job = msjob(replica, schedulerName="kube-batch")
    warnings = [(f.code, f.severity.value) for f in MS.validate(MS.default(job))]
    assert warnings == [
        ("mindspore.template_metadata", "warning"),
        ("mindspore.scheduler_name", "warning"),
    ]
    pod = objects(job)[("Pod", "ms-dist-master-mnfh-0")]
    assert "team" not in pod["metadata"]["labels"]
    assert pod["spec"]["schedulerName"] == "kube-batch"


def test_env_goes_only_into_the_mindspore_container() -> None:
    replica = _replica("MASTER", 1)
    replica["template"]["spec"]["containers"].append({"name": "logger", "image": "busybox:1"})
    pod = objects(msjob(replica))[("Pod", "ms-dist-master-mnfh-0")]
    assert [c.get("env") is not None for c in pod["spec"]["containers"]] == [True, False]


def test_the_seeds_wip_example_is_refused_for_its_duplicate_key() -> None:
    # Upstream writes restartPolicy twice in one pod spec: kubectl refuses that.
    with pytest.raises(SpecError) as err:
        load_path(LEGACY / "ms-dist-train.yaml")
    (finding,) = err.value.findings
    assert "duplicate key 'restartPolicy' at line 32" in finding.message


def test_the_seeds_wip_example_is_refused_with_every_reason() -> None:
    # Read leniently (the duplicate key aside, test above): every other reason it fails.
    docs = list(yaml.safe_load_all((LEGACY / "ms-dist-train.yaml").read_text()))
    with pytest.raises(SpecError) as err:
        run(parse_documents(docs, source=str(LEGACY / "ms-dist-train.yaml")))
    assert [(f.path, f.message) for f in err.value.findings] == [
        (
            "jobs[0].spec.replicaSpecs[1].template.spec.containers[0].volumeMounts[1]",
            "'mountPath' is a required property",
        ),
        (
            "jobs[0].spec.replicaSpecs[1].template.spec.containers[0].volumeMounts[1].hostPath",
            "unknown field",
        ),
        (
            "jobs[0].spec.backend",
            "backend is not part of the MSJob API and the operator dropped it; its only "
            "rendezvous is TCP through MASTER_ADDR and MASTER_PORT, so the job gets what 'tcp' "
            "asks for and the field is left out",
        ),
        (
            "jobs[0].spec.masterPort",
            "masterPort belongs on each replica spec; the operator ignored it here and gave every "
            "replica 23456. trainjobs applies 23456 to each replica spec without a masterPort of "
            "its own",
        ),
        (
            "jobs[0].spec.replicaSpecs[0].template.spec.containers",
            "no container is named 'mindspore'; the operator refuses the job and injects its env "
            "only into that container",
        ),
        (
            "jobs[0].spec.replicaSpecs[0].template.spec.containers[0].volumeMounts[1].name",
            "the mount names a volume the pod does not declare",
        ),
        (
            "jobs[0].spec.replicaSpecs[1].template.spec.containers",
            "no container is named 'mindspore'; the operator refuses the job and injects its env "
            "only into that container",
        ),
        (
            "jobs[0].spec.replicaSpecs[1].template.spec.containers[0].volumeMounts[1].name",
            "the mount names a volume the pod does not declare",
        ),
    ]


def test_the_lenet_example_runs_the_seeds_mnist_pod() -> None:
    (seed,) = load_all((LEGACY / "ms-mnist.yaml").read_text())
    example = load_path(DATA.parent.parent / "examples" / "mindspore-lenet" / "msjob.yaml")
    (entry,) = example.jobs
    assert isinstance(entry.job, MSJob)
    (replica,) = entry.job.spec.replica_specs
    (container,) = replica.template["spec"]["containers"]
    (seed_container,) = seed["spec"]["containers"]
    assert container == {**seed_container, "name": "mindspore"}
    assert replica.template["spec"]["volumes"] == seed["spec"]["volumes"]
    assert replica.template["spec"]["restartPolicy"] == seed["spec"]["restartPolicy"]


def test_the_distributed_example_is_the_seeds_job_made_to_work() -> None:
    (seed,) = yaml.safe_load_all((LEGACY / "ms-dist-train.yaml").read_text())
    stack = load_path(DATA.parent.parent / "examples" / "mindspore-distributed" / "msjob.yaml")
    (entry,) = stack.jobs
    assert isinstance(entry.job, MSJob)
    spec = entry.job.spec
    assert (spec.backend, spec.master_port) == (seed["spec"]["backend"], seed["spec"]["masterPort"])
    assert [(r.replica_type, r.replicas) for r in spec.replica_specs] == [
        ("MASTER", 1),
        ("WORKER", 3),
    ]
    rendering = run(stack, target="pods")
    # The check rules' findings (no requests …) have tests of their own.
    assert sorted(f.code for f in rendering.findings if RULES.get(f.code) is None) == [
        "mindspore.backend",
        "mindspore.master_port",
    ]


def test_parse_errors_name_the_field() -> None:
    doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MSJob",
        "metadata": {"name": "ms"},
        "spec": {"replicaSpecs": [{**_replica("Master", 1)}]},
    }
    with pytest.raises(SpecError) as err:
        parse_documents([doc])
    assert [f.render() for f in err.value.findings] == [
        "error: jobs[0].spec.replicaSpecs[0].replicaType: input should be 'MASTER' or 'WORKER' "
        "(got 'Master'); fix: use one of the values listed"
    ]
