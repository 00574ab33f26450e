"""Caffe2Job (frameworks/caffe2.py and its rules, _caffe2_rules.py): the reference's worked
example (§1.4) literally, defaults, rules, backends."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.expand import expand_pods
from tests.support.paths import DATA
from trainjobs.check import run
from trainjobs.check.rules import RULES
from trainjobs.errors import Finding, SpecError
from trainjobs.frameworks.caffe2 import ENV_ORDER, Caffe2Job
from trainjobs.frameworks.caffe2 import FRAMEWORK as C2
from trainjobs.k8s.yamlio import load_all
from trainjobs.plan import BackendBinding
from trainjobs.render import Rendering
from trainjobs.spec import parse_documents
from trainjobs.spec.stack import StackSpec

CAFFE2 = DATA / "caffe2"
UPSTREAM = sorted(p for p in CAFFE2.glob("*.yaml") if p.name != "crd.yaml")

WORKED_WORKER_1_ENV = [
    {"name": "REDIS_HOST", "value": "redis-service"},
    {"name": "REDIS_PORT", "value": "6379"},
    {"name": "NFS_PATH", "value": ""},
    {"name": "SHARD_ID", "value": "1"},
    {"name": "NUM_SHARDS", "value": "2"},
    {"name": "RUN_ID", "value": "1529307087"},
    {
        "name": "CAFFE2_CONFIG",
        "value": '{"cluster":{"worker":["default-example-job-worker-0:2222",'
        '"default-example-job-worker-1:2222"]},"task":{"type":"worker","index":1}}',
    },
]
WORKED_ENV_NAMES = [e["name"] for e in WORKED_WORKER_1_ENV]


# Upstream's Caffe2 jobs run on the host network and read the node's files, so they
# need a privileged namespace; these tests are about the framework, and the check
# rules (Pod Security, requests …) have tests of their own.
def _privileged(stack: StackSpec) -> StackSpec:
    return replace(stack, ignore=("pss.baseline.host_namespaces", "pss.baseline.host_path"))


def _framework_findings(rendering: Rendering) -> list[Finding]:
    return [f for f in rendering.findings if RULES.get(f.code) is None]


def caffe2_docs(path: Path) -> list[dict[str, Any]]:
    """The Caffe2Job documents of an upstream file (resnet50_redis.yaml also holds a
    redis Service and Pod, which are not jobs)."""
    return [d for d in load_all(path.read_text()) if d.get("kind") == "Caffe2Job"]


def worked_job(**spec: Any) -> Caffe2Job:
    (doc,) = caffe2_docs(CAFFE2 / "resnet50_redis.yaml")
    doc["spec"] = {**doc["spec"], "RuntimeID": "1529307087", **spec}
    return Caffe2Job.model_validate(doc)


def objects(job: Caffe2Job) -> dict[tuple[str, str], dict[str, Any]]:
    defaulted = C2.default(job)
    assert C2.validate(defaulted) == []
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(C2, defaulted)}


def test_worked_example_worker_1_is_the_controllers_pod() -> None:
    pod = objects(worked_job())[("Pod", "example-job-worker-1")]
    assert pod["metadata"] == {
        # Deviation: a stable name instead of generateName "example-job-".
        "name": "example-job-worker-1",
        "namespace": "default",
        "labels": {
            "group_name": "kubeflow.org",
            "caffe2_job_key": "default-example-job",
            "runtime_id": "1529307087",
            "caffe2_replica_type": "worker",
            "caffe2_replica_index": "1",
        },
    }
    spec = pod["spec"]
    assert spec["hostNetwork"] is True
    assert spec["restartPolicy"] == "Never"
    # Deviation: host-network pods resolve cluster names.
    assert spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    (container,) = spec["containers"]
    assert container["name"] == "caffe2"
    assert container["image"] == "kubeflow/caffe2:py2-cuda9.0-cudnn7-ubuntu16.04"
    assert container["env"] == WORKED_WORKER_1_ENV
    assert container["args"][4:7] == [
        "--redis_host=$(REDIS_HOST)",
        "--redis_port=$(REDIS_PORT)",
        "--num_shards=$(NUM_SHARDS)",
    ]
    assert spec["volumes"] == [{"name": "dataset", "hostPath": {"path": "/data/nfs_share/"}}]
    assert set(spec) == {"hostNetwork", "containers", "volumes", "restartPolicy", "dnsPolicy"}


def test_every_caffe2_config_host_is_a_service_selecting_its_worker() -> None:
    found = objects(worked_job())
    config = json.loads(
        found[("Pod", "example-job-worker-0")]["spec"]["containers"][0]["env"][6]["value"]
    )
    for index, host in enumerate(config["cluster"]["worker"]):
        name, port = host.split(":")
        service = found[("Service", name)]
        assert service["spec"]["clusterIP"] == "None"
        assert service["spec"]["ports"] == [{"name": "caffe2-port", "port": int(port)}]
        pod = found[("Pod", f"example-job-worker-{index}")]
        assert service["spec"]["selector"] == pod["metadata"]["labels"]
    assert sorted(kind for kind, _ in found) == ["Pod", "Pod", "Service", "Service"]


@settings(max_examples=40, deadline=None)
@given(
    name=st.from_regex(r"[a-z][a-z0-9-]{0,30}[a-z0-9]", fullmatch=True),
    namespace=st.from_regex(r"[a-z][a-z0-9]{0,20}", fullmatch=True),
    replicas=st.integers(min_value=1, max_value=6),
)
def test_hosts_resolve_and_the_run_id_is_stable_for_any_job(
    name: str, namespace: str, replicas: int
) -> None:
    doc = {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "Caffe2Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "backendSpecs": {"backendType": "nfs", "nfsPath": "/share"},
            "replicaSpecs": {
                "replicas": replicas,
                "template": {"spec": {"containers": [{"name": "caffe2", "image": "c2:1"}]}},
            },
        },
    }
    first = C2.default(Caffe2Job.model_validate(doc))
    again = C2.default(Caffe2Job.model_validate(doc))
    assert isinstance(first, Caffe2Job) and isinstance(again, Caffe2Job)
    run_id = first.spec.runtime_id
    assert run_id == again.spec.runtime_id
    assert run_id is not None and len(run_id) == 10 and run_id.isdigit() and run_id[0] != "0"
    manifests = expand_pods(C2, first)
    services = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "Service"}
    pods = [m for m in manifests if m["kind"] == "Pod"]
    assert len(pods) == replicas
    for pod in pods:
        env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
        assert [e["name"] for e in pod["spec"]["containers"][0]["env"]] == list(ENV_ORDER)
        assert env["RUN_ID"] == run_id
        for host in json.loads(env["CAFFE2_CONFIG"])["cluster"]["worker"]:
            selector = services[host.split(":")[0]]["spec"]["selector"]
            matching = [p for p in pods if selector.items() <= p["metadata"]["labels"].items()]
            assert len(matching) == 1


def test_defaults_are_the_controllers_and_explicit_on_the_operator_target() -> None:
    (doc,) = caffe2_docs(CAFFE2 / "resnet50.historic-2018-06.yaml")
    job = Caffe2Job.model_validate(doc)
    manifest = C2.operator_manifest(C2.default(job))
    spec = manifest["spec"]
    assert list(spec) == ["RuntimeID", "backendSpecs", "replicaSpecs", "terminationPolicy"]
    assert spec["RuntimeID"] == "3393339803"
    assert spec["backendSpecs"] == {
        "backendType": "none",
        "nfsPath": "",
        "redisHost": "",
        "redisPort": 0,
    }
    assert spec["replicaSpecs"]["replicas"] == 1
    assert spec["replicaSpecs"]["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["terminationPolicy"] == {"chief": {"replicaName": "WORKER", "replicaIndex": 0}}
    assert manifest["metadata"] == {"name": "example-job", "namespace": "default"}


def test_more_than_one_replica_defaults_to_redis() -> None:
    job = worked_job()
    spec = job.spec.model_copy(update={"backend_specs": None})
    defaulted = C2.default(job.model_copy(update={"spec": spec}))
    assert isinstance(defaulted, Caffe2Job)
    assert defaulted.spec.backend_specs is not None
    assert defaulted.spec.backend_specs.backend_type == "redis"


def test_the_never_called_upstream_rules_are_findings() -> None:
    def codes(**spec: Any) -> list[tuple[str, str]]:
        found = C2.validate(C2.default(worked_job(**spec)))
        return [(f.code, f.path) for f in found]

    assert codes(backendSpecs={"backendType": "none"}) == [
        ("caffe2.backend_needed", "spec.backendSpecs.backendType")
    ]
    assert codes(backendSpecs={"backendType": "nfs"}) == [
        ("caffe2.nfs_path", "spec.backendSpecs.nfsPath")
    ]
    assert codes(backendSpecs={"backendType": "redis", "redisPort": 6379}) == [
        ("caffe2.redis_host", "spec.backendSpecs.redisHost")
    ]
    (finding,) = C2.validate(C2.default(worked_job(backendSpecs={"backendType": "none"})))
    assert finding.render() == (
        "error: spec.backendSpecs.backendType: 2 workers need a redis or nfs backend to find "
        "each other (got 'none'); fix: set backendType to redis or nfs, or name a RedisBackend "
        "or NfsBackend in trainjobs.backend"
    )


def test_bad_input_is_reported_with_the_users_paths() -> None:
    (doc,) = caffe2_docs(CAFFE2 / "resnet50_nfs.yaml")
    template = doc["spec"]["replicaSpecs"]["template"]
    template["spec"]["containers"][0].pop("image")
    template["spec"]["volumes"] = []
    with pytest.raises(SpecError) as err:
        run(parse_documents([doc]))
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0].spec.replicaSpecs.template.spec.containers[0].image: every container "
        "needs an image; fix: e.g. image: kubeflow/caffe2:py2-cuda9.0-cudnn7-ubuntu16.04",
        "error: jobs[0].spec.replicaSpecs.template.spec.containers[0].volumeMounts[0].name: the "
        "mount names a volume the pod does not declare (got 'dataset'); fix: add a volume named "
        "'dataset' to spec.volumes or remove the mount",
    ]


def test_a_misspelt_runtime_id_key_is_named() -> None:
    (doc,) = caffe2_docs(CAFFE2 / "resnet50_nfs.yaml")
    doc["spec"]["runtimeID"] = "1"
    with pytest.raises(SpecError) as err:
        parse_documents([doc])
    assert [f.render() for f in err.value.findings] == [
        "error: jobs[0].spec.runtimeID: unknown field (got '1'); fix: did you mean 'RuntimeID'?"
    ]


def test_explicit_cluster_first_dns_on_the_host_network_is_warned() -> None:
    job = worked_job()
    job.spec.replica_specs.template["spec"]["dnsPolicy"] = "ClusterFirst"
    defaulted = C2.default(job)
    assert isinstance(defaulted, Caffe2Job)
    assert defaulted.spec.replica_specs.template["spec"]["dnsPolicy"] == "ClusterFirst"
    (finding,) = C2.validate(defaulted)
    assert (finding.code, finding.severity.value) == ("caffe2.host_network_dns", "warning")


def test_a_redis_backend_fills_backend_specs_and_adds_only_the_password() -> None:
    job = C2.default(worked_job(backendSpecs=None))
    password = {
        "name": "REDIS_PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "password"}},
    }
    binding = BackendBinding(
        "redis",
        "redis",
        host="redis.default.svc",
        port=6380,
        env=(
            {"name": "REDIS_HOST", "value": "redis.default.svc"},
            {"name": "REDIS_PORT", "value": "6380"},
            password,
        ),
    )
    bound = C2.written(job, C2.plan(job).with_backend(binding))
    assert isinstance(bound, Caffe2Job)
    assert bound.spec.backend_specs is not None
    assert bound.spec.backend_specs.to_manifest() == {
        "backendType": "redis",
        "nfsPath": "",
        "redisHost": "redis.default.svc",
        "redisPort": 6380,
    }
    assert C2.validate(bound) == []
    pod = {p["metadata"]["name"]: p for p in expand_pods(C2, bound)}["example-job-worker-0"]
    env = pod["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["REDIS_PASSWORD", *WORKED_ENV_NAMES]
    assert env[0] == password
    assert env[1:3] == [
        {"name": "REDIS_HOST", "value": "redis.default.svc"},
        {"name": "REDIS_PORT", "value": "6380"},
    ]


def test_a_backend_replacing_a_written_backend_spec_is_warned() -> None:
    job = C2.default(worked_job())
    binding = BackendBinding("nfs", "share", path="/mnt/share")
    bound = C2.written(job, C2.plan(job).with_backend(binding))
    (finding,) = C2.validate(bound)
    assert finding.render() == (
        "warning: spec.backendSpecs: the backend named in trainjobs.backend replaces this "
        "backendSpecs; the job now uses nfs /mnt/share (got 'redis redis-service:6379'); "
        "fix: remove spec.backendSpecs, or remove trainjobs.backend"
    )


def test_an_nfs_backend_sets_the_path_and_mounts_the_share() -> None:
    share = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "NfsBackend",
        "metadata": {"name": "share"},
        "spec": {"server": "nfs.lab", "path": "/exports/caffe2", "mountPath": "/share2/public"},
    }
    (doc,) = caffe2_docs(CAFFE2 / "resnet50_nfs.yaml")
    del doc["spec"]["backendSpecs"]
    # The share replaces the node's hostPath mount of the same directory.
    template = doc["spec"]["replicaSpecs"]["template"]["spec"]
    del template["volumes"]
    del template["containers"][0]["volumeMounts"]
    doc["trainjobs"] = {"target": "pods", "backend": "share"}
    rendering = run(_privileged(parse_documents([share, doc])))
    assert _framework_findings(rendering) == []
    pod = next(m for m in rendering.manifests if m["metadata"]["name"] == "example-job-1-worker-1")
    (container,) = pod["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert [e["name"] for e in container["env"]] == WORKED_ENV_NAMES
    assert env["NFS_PATH"] == "/share2/public"
    assert container["volumeMounts"][-1] == {"name": "share-share", "mountPath": "/share2/public"}
    assert pod["spec"]["volumes"][-1] == {
        "name": "share-share",
        "nfs": {"server": "nfs.lab", "path": "/exports/caffe2"},
    }


@pytest.mark.parametrize("path", UPSTREAM, ids=lambda p: p.name)
@pytest.mark.parametrize("target", ["operator", "pods"])
def test_every_upstream_example_is_accepted_and_renders(path: Path, target: str) -> None:
    stack = parse_documents(caffe2_docs(path), source=str(path))
    rendering = run(_privileged(stack), target=target)  # type: ignore[arg-type]
    kinds = sorted({m["kind"] for m in rendering.manifests})
    assert kinds == (["Caffe2Job"] if target == "operator" else ["Pod", "Service"])
    assert _framework_findings(rendering) == []


def test_a_long_job_key_label_is_shortened() -> None:
    job = worked_job()
    long_name = "r" * 60
    renamed = job.model_copy(
        update={"metadata": job.metadata.model_copy(update={"name": long_name})}
    )
    doc = {**renamed.to_manifest(), "trainjobs": {"target": "pods"}}
    run_on = run(_privileged(parse_documents([doc])))
    pod = next(m for m in run_on.manifests if m["kind"] == "Pod")
    key = pod["metadata"]["labels"]["caffe2_job_key"]
    assert len(key) == 63 and key.startswith("default-rrrr")


def test_a_redis_backend_with_a_password_end_to_end() -> None:
    redis = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "RedisBackend",
        "metadata": {"name": "redis", "namespace": "default"},
        # The seed job runs on the host network, where no NetworkPolicy can admit it.
        "spec": {"password": True, "networkPolicy": False},
    }
    (doc,) = caffe2_docs(CAFFE2 / "resnet50_redis.yaml")
    del doc["spec"]["backendSpecs"]
    doc["trainjobs"] = {"target": "pods", "backend": "redis"}
    rendering = run(_privileged(parse_documents([redis, doc])))
    (unit,) = rendering.jobs
    assert [str(d) for d in unit.depends_on] == ["backend default/redis"]
    pod = next(m for m in rendering.manifests if m["metadata"]["name"] == "example-job-worker-0")
    env = pod["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["REDIS_PASSWORD", *WORKED_ENV_NAMES]
    assert env[0]["valueFrom"] == {"secretKeyRef": {"name": "redis-auth", "key": "password"}}
    assert env[1:3] == [
        {"name": "REDIS_HOST", "value": "redis.default.svc"},
        {"name": "REDIS_PORT", "value": "6379"},
    ]
