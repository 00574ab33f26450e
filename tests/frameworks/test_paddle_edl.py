"""PaddlePaddle EDL TrainingJob: the reference's worked example (§3.3) literally, the
expansion of each component, defaults, spellings and the documented deviations."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.expand import expand_pods
from tests.support.paths import DATA
from trainjobs.check import run
from trainjobs.check.rules import RULES
from trainjobs.frameworks.base import operator_rules
from trainjobs.frameworks.paddle_edl import FRAMEWORK as EDL
from trainjobs.frameworks.paddle_edl import TrainingJob
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import parse_documents
from trainjobs.targets.names import Target

FIT_A_LINE = DATA / "paddle-edl" / "fit_a_line-examplejob.yaml"


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


# The reference's trainer pod (seed-systems.md §3.3), env exactly as printed there.
REFERENCE_ENV: list[dict[str, Any]] = [
    {"name": "PADDLE_JOB_NAME", "value": "example"},
    {"name": "TRAINERS", "value": "2"},
    {"name": "PSERVERS", "value": "2"},
    {"name": "ENTRY", "value": "python /workspace/train_ft.py"},
    {"name": "TOPOLOGY", "value": "python /workspace/train_ft.py"},
    {"name": "TRAINER_PACKAGE", "value": "/workspace"},
    {"name": "PADDLE_INIT_PORT", "value": "7164"},
    {"name": "PADDLE_INIT_TRAINER_COUNT", "value": "1"},
    {"name": "PADDLE_INIT_PORTS_NUM", "value": "1"},
    {"name": "PADDLE_INIT_PORTS_NUM_FOR_SPARSE", "value": "1"},
    {"name": "PADDLE_INIT_NUM_GRADIENT_SERVERS", "value": "2"},
    {"name": "PADDLE_INIT_NUM_PASSES", "value": "0"},
    {"name": "PADDLE_INIT_USE_GPU", "value": "0"},
    {"name": "LD_LIBRARY_PATH", "value": "/usr/local/cuda/lib64"},
    _field("NAMESPACE", "metadata.namespace"),
    _field("POD_IP", "status.podIP"),
]
# The one documented deviation in the env: the controller's defaults are applied
# (the TPR controller never called them; the CRD variant did and wrote "1").
DEVIATIONS = {"PADDLE_INIT_NUM_PASSES": "1"}
EXPECTED_ENV = [
    {**e, "value": DEVIATIONS[e["name"]]} if e["name"] in DEVIATIONS else e for e in REFERENCE_ENV
]
REFERENCE_TRAINER_CONTAINER = {
    "name": "trainer",
    "image": "paddlepaddle/edl-example",
    "imagePullPolicy": "Always",
    "command": ["paddle_k8s", "start_new_trainer"],
    "ports": [
        {"name": "jobport-7164", "containerPort": 7164},
        {"name": "jobport-7165", "containerPort": 7165},
    ],
    "resources": {
        "limits": {"cpu": "200m", "memory": "200Mi"},
        "requests": {"cpu": "200m", "memory": "200Mi"},
    },
}


def upstream_doc() -> dict[str, Any]:
    doc: dict[str, Any] = load_all(FIT_A_LINE.read_text())[0]
    return doc


def _objects(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    job = TrainingJob.model_validate(doc)
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(EDL, EDL.default(job))}


def _training_job(doc: dict[str, Any]) -> Any:
    """The TrainingJob the operator target emits for ``doc`` (its NetworkPolicy beside)."""
    manifests = run(parse_documents([doc]), target="operator").manifests
    (job,) = [m for m in manifests if m["kind"] == "TrainingJob"]
    return job


def _pod(objects: dict[tuple[str, str], dict[str, Any]], kind: str, name: str) -> Any:
    return objects[(kind, name)]["spec"]["template"]


def test_worked_example_trainer_pod_is_the_reference_one() -> None:
    template = _pod(_objects(upstream_doc()), "Job", "example-trainer")
    assert template["metadata"] == {"labels": {"paddle-job": "example"}}
    assert template["spec"] == {
        # Deviation: the job's own least-privilege identity (upstream: cluster-admin default).
        "serviceAccountName": "example-edl",
        "restartPolicy": "Never",
        "containers": [{**REFERENCE_TRAINER_CONTAINER, "env": EXPECTED_ENV}],
    }


def test_worked_example_objects_in_apply_order() -> None:
    rendering = run(parse_documents([upstream_doc()]), target="pods")
    assert [(m["apiVersion"], m["kind"], m["metadata"]["name"]) for m in rendering.manifests] == [
        ("v1", "ServiceAccount", "example-edl"),
        ("rbac.authorization.k8s.io/v1", "Role", "example-edl-pod-reader"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding", "example-edl-pod-reader"),
        ("networking.k8s.io/v1", "NetworkPolicy", "example-master"),
        ("apps/v1", "ReplicaSet", "example-master"),
        ("apps/v1", "ReplicaSet", "example-pserver"),
        ("batch/v1", "Job", "example-trainer"),
    ]
    assert {m["metadata"]["namespace"] for m in rendering.manifests} == {"default"}
    workloads = {m["metadata"]["name"]: m["spec"] for m in rendering.manifests[4:]}
    assert workloads["example-master"]["replicas"] == 1
    assert workloads["example-pserver"]["replicas"] == 2
    assert workloads["example-trainer"]["parallelism"] == 2
    assert "completions" not in workloads["example-trainer"]


MASTER_POLICY = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": {
        "name": "example-master",
        "namespace": "default",
        "labels": {"app.kubernetes.io/managed-by": "trainjobs"},
    },
    "spec": {
        "podSelector": {"matchLabels": {"paddle-job-master": "example"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [
                    {"podSelector": {"matchLabels": {"paddle-job-pserver": "example"}}},
                    {"podSelector": {"matchLabels": {"paddle-job": "example"}}},
                ],
                "ports": [
                    {"protocol": "TCP", "port": 8080},
                    {"protocol": "TCP", "port": 2379},
                    {"protocol": "TCP", "port": 4001},
                ],
            }
        ],
    },
}


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_master_etcd_admits_only_the_jobs_own_pods(target: Target) -> None:
    """The master pod's etcd and task master answer without a password: on both targets
    a NetworkPolicy admits only the job's pservers and trainers, on exactly the ports
    they use, selecting the master pod by the label the controller (or the pods target)
    gives it. Fails without the framework's listener."""
    rendering = run(parse_documents([upstream_doc()]), target=target)
    policies = [m for m in rendering.manifests if m["kind"] == "NetworkPolicy"]
    assert policies == [MASTER_POLICY]
    if target == "pods":
        pods = {
            m["metadata"]["name"]: m["spec"]["template"]["metadata"]["labels"]
            for m in rendering.manifests
            if m["kind"] in ("ReplicaSet", "Job")
        }
        assert pods == {
            "example-master": {"paddle-job-master": "example"},
            "example-pserver": {"paddle-job-pserver": "example"},
            "example-trainer": {"paddle-job": "example"},
        }


def test_master_policy_opt_out_is_explicit() -> None:
    doc = {**upstream_doc(), "trainjobs": {"networkPolicy": False}}
    rendering = run(parse_documents([doc]), target="pods")
    assert [m["kind"] for m in rendering.manifests].count("ReplicaSet") == 2
    assert [m for m in rendering.manifests if m["kind"] == "NetworkPolicy"] == []


def test_replica_sets_select_exactly_their_pods() -> None:
    objects = _objects(upstream_doc())
    for name, label in (
        ("example-master", "paddle-job-master"),
        ("example-pserver", "paddle-job-pserver"),
    ):
        spec = objects[("ReplicaSet", name)]["spec"]
        assert spec["selector"] == {"matchLabels": {label: "example"}}
        assert spec["template"]["metadata"]["labels"] == {label: "example"}


def test_master_pod_runs_the_master_and_its_etcd() -> None:
    pod = _pod(_objects(upstream_doc()), "ReplicaSet", "example-master")["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert "serviceAccountName" not in pod
    master, etcd = pod["containers"]
    assert master == {
        "name": "master",
        "image": "paddlepaddle/edl-example",
        "imagePullPolicy": "Always",
        "command": ["paddle_k8s", "start_master"],
        "ports": [
            {"name": "master-port", "containerPort": 8080},
            {"name": "etcd-port", "containerPort": 2379},
        ],
        "resources": {
            "limits": {"cpu": "1", "memory": "1Gi"},
            "requests": {"cpu": "500m", "memory": "600Mi"},
        },
    }
    assert etcd["name"] == "etcd"
    assert etcd["image"] == "quay.io/coreos/etcd:v3.2.1"
    assert etcd["imagePullPolicy"] == "Always"
    assert " ".join(etcd["command"]) == (
        "etcd -name etcd0 -advertise-client-urls http://$(POD_IP):2379,http://$(POD_IP):4001 "
        "-listen-client-urls http://0.0.0.0:2379,http://0.0.0.0:4001 "
        "-initial-advertise-peer-urls http://$(POD_IP):2380 -listen-peer-urls http://0.0.0.0:2380 "
        "-initial-cluster etcd0=http://$(POD_IP):2380 -initial-cluster-state new"
    )
    assert etcd["env"] == EXPECTED_ENV
    assert "ports" not in etcd


def test_pserver_has_no_pull_policy_and_no_mounts() -> None:
    doc = upstream_doc()
    doc["spec"]["volumes"] = [{"name": "data", "hostPath": {"path": "/data"}}]
    doc["spec"]["VolumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    objects = _objects(doc)
    (pserver,) = _pod(objects, "ReplicaSet", "example-pserver")["spec"]["containers"]
    assert pserver["command"] == ["paddle_k8s", "start_new_pserver"]
    assert "imagePullPolicy" not in pserver
    assert "volumeMounts" not in pserver
    assert pserver["env"] == EXPECTED_ENV
    assert pserver["resources"] == {
        "limits": {"cpu": "800m", "memory": "1Gi"},
        "requests": {"cpu": "500m", "memory": "600Mi"},
    }
    for kind, name in (
        ("ReplicaSet", "example-master"),
        ("ReplicaSet", "example-pserver"),
        ("Job", "example-trainer"),
    ):
        assert _pod(objects, kind, name)["spec"]["volumes"] == doc["spec"]["volumes"]
    mount = [{"name": "data", "mountPath": "/data"}]
    assert _pod(objects, "Job", "example-trainer")["spec"]["containers"][0]["volumeMounts"] == mount
    assert (
        _pod(objects, "ReplicaSet", "example-master")["spec"]["containers"][0]["volumeMounts"]
        == mount
    )


def test_without_fault_tolerance_the_plain_commands_run() -> None:
    doc = upstream_doc()
    doc["spec"]["fault_tolerant"] = False
    doc["spec"]["trainer"]["max-instance"] = 2
    objects = _objects(doc)
    trainer = _pod(objects, "Job", "example-trainer")["spec"]["containers"][0]
    pserver = _pod(objects, "ReplicaSet", "example-pserver")["spec"]["containers"][0]
    assert trainer["command"] == ["paddle_k8s", "start_trainer", "v2"]
    assert pserver["command"] == ["paddle_k8s", "start_pserver"]
    # As the TPR controller did, the master is created for non-fault-tolerant jobs too.
    assert ("ReplicaSet", "example-master") in objects


def _trainer_env(doc: dict[str, Any]) -> dict[str, str]:
    container = _pod(_objects(doc), "Job", "example-trainer")["spec"]["containers"][0]
    return {e["name"]: e.get("value", "") for e in container["env"]}


@pytest.mark.parametrize(
    ("resources", "count", "use_gpu"),
    [
        ({"requests": {"cpu": "200m"}}, "1", "0"),
        ({"requests": {"cpu": "1500m"}}, "2", "0"),
        ({"requests": {"cpu": 3}}, "3", "0"),
        # Deviation: without a request the limit counts (upstream wrote 0).
        ({"limits": {"cpu": "2500m"}}, "3", "0"),
        ({}, "0", "0"),
        (
            {
                "limits": {"alpha.kubernetes.io/nvidia-gpu": 2},
                "requests": {"alpha.kubernetes.io/nvidia-gpu": 2},
            },
            "2",
            "1",
        ),
        ({"limits": {"nvidia.com/gpu": 4}, "requests": {"cpu": 8}}, "4", "1"),
        # GPUs in requests only do not make a GPU job: the controller looked at the limits.
        ({"requests": {"nvidia.com/gpu": 1, "cpu": 1}}, "1", "0"),
    ],
)
def test_trainer_count_and_gpu_flag(resources: dict[str, Any], count: str, use_gpu: str) -> None:
    doc = upstream_doc()
    doc["spec"]["trainer"]["resources"] = resources
    env = _trainer_env(doc)
    assert (env["PADDLE_INIT_TRAINER_COUNT"], env["PADDLE_INIT_USE_GPU"]) == (count, use_gpu)


def test_legacy_gpu_name_becomes_nvidia_com_gpu_in_pods() -> None:
    doc = upstream_doc()
    doc["spec"]["trainer"]["resources"] = {
        "limits": {"alpha.kubernetes.io/nvidia-gpu": 1, "cpu": "800m"},
        "requests": {"cpu": "500m"},
    }
    container = _pod(_objects(doc), "Job", "example-trainer")["spec"]["containers"][0]
    assert container["resources"] == {
        "limits": {"nvidia.com/gpu": 1, "cpu": "800m"},
        "requests": {"cpu": "500m"},
    }
    operator = _training_job(doc)
    assert operator["spec"]["trainer"]["resources"]["limits"] == {
        "alpha.kubernetes.io/nvidia-gpu": 1,
        "cpu": "800m",
    }


@pytest.mark.parametrize("key", ["HostNetwork", "hostNetwork", "host_network"])
def test_host_network_in_every_spelling(key: str) -> None:
    doc = upstream_doc()
    doc["spec"][key] = True
    objects = _objects(doc)
    for kind, name in (
        ("ReplicaSet", "example-master"),
        ("ReplicaSet", "example-pserver"),
        ("Job", "example-trainer"),
    ):
        assert _pod(objects, kind, name)["spec"]["hostNetwork"] is True
    operator = _training_job(doc)
    assert operator["spec"]["HostNetwork"] is True
    assert "hostNetwork" not in operator["spec"] and "host_network" not in operator["spec"]


def test_volume_mounts_lower_case_spelling_is_accepted() -> None:
    doc = upstream_doc()
    doc["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    doc["spec"]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    operator = _training_job(doc)
    assert operator["spec"]["VolumeMounts"] == [{"name": "data", "mountPath": "/data"}]


def test_node_selector_and_pull_secrets_reach_every_pod() -> None:
    doc = upstream_doc()
    doc["spec"]["NodeSelector"] = {"pool": "cpu"}
    doc["spec"]["imagePullSecrets"] = [{"name": "regcred"}]
    objects = _objects(doc)
    for kind, name in (
        ("ReplicaSet", "example-master"),
        ("ReplicaSet", "example-pserver"),
        ("Job", "example-trainer"),
    ):
        spec = _pod(objects, kind, name)["spec"]
        assert spec["nodeSelector"] == {"pool": "cpu"}
        assert spec["imagePullSecrets"] == [{"name": "regcred"}]


def test_job_identity_can_only_read_pods_of_its_namespace() -> None:
    doc = upstream_doc()
    doc["metadata"]["namespace"] = "team-a"
    objects = _objects(doc)
    role = objects[("Role", "example-edl-pod-reader")]
    assert role["metadata"]["namespace"] == "team-a"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    ]
    binding = objects[("RoleBinding", "example-edl-pod-reader")]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "example-edl-pod-reader",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "example-edl", "namespace": "team-a"}
    ]
    for kind, name in (("ReplicaSet", "example-pserver"), ("Job", "example-trainer")):
        assert _pod(objects, kind, name)["spec"]["serviceAccountName"] == "example-edl"


def test_defaults_are_made_explicit_on_the_operator_target() -> None:
    doc = {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "bare"},
        "spec": {
            "port": 0,
            "trainer": {
                "entrypoint": "python train.py",
                "min-instance": 1,
                "resources": {"requests": {"cpu": 1}},
            },
            "pserver": {"min-instance": 1},
        },
    }
    manifest = _training_job(doc)
    assert manifest == {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "bare", "namespace": "default"},
        "spec": {
            "image": "paddlepaddle/paddlecloud-job",
            "port": 7164,
            "ports_num": 1,
            "ports_num_for_sparse": 1,
            "fault_tolerant": False,
            "passes": 1,
            "trainer": {
                "entrypoint": "python train.py",
                "min-instance": 1,
                "resources": {"requests": {"cpu": 1}},
            },
            "pserver": {"min-instance": 1},
        },
    }


def test_controller_written_fields_are_dropped() -> None:
    doc = upstream_doc()
    doc["status"] = {"phase": "running"}
    doc["spec"]["trainer"]["replicaSpec"] = {"spec": {"parallelism": 4}}
    doc["metadata"]["uid"] = "1234"
    manifest = _training_job(doc)
    assert "status" not in manifest
    assert "replicaSpec" not in manifest["spec"]["trainer"]
    assert "uid" not in manifest["metadata"]


def test_long_job_names_keep_the_label_and_shorten_object_names() -> None:
    doc = upstream_doc()
    doc["metadata"]["name"] = "x" * 63
    manifests = run(parse_documents([doc]), target="pods").manifests
    assert all(len(m["metadata"]["name"]) <= 63 for m in manifests)
    (trainer,) = [m for m in manifests if m["kind"] == "Job"]
    assert trainer["spec"]["template"]["metadata"]["labels"] == {"paddle-job": "x" * 63}
    assert trainer["metadata"]["name"].startswith("x" * 40)


def test_every_upstream_example_renders_on_both_targets() -> None:
    for path in sorted((DATA / "paddle-edl").iterdir()):
        if path.name == "README.md":
            continue
        text = path.read_text().replace("<jobname>", "experiment")
        stack = parse_documents(load_all(text), source=str(path))
        for target in ("operator", "pods"):
            rendering = run(stack, target=target)
            assert rendering.manifests, (path.name, target)
            codes = [f.code for f in rendering.findings if RULES.get(f.code) is None]
            assert codes == ["edl.passes_misplaced"], path.name


def test_framework_facts() -> None:
    assert EDL.name == "paddle-edl"
    assert (EDL.kind.api_version, EDL.kind.kind, EDL.kind.plural) == (
        "paddlepaddle.org/v1",
        "TrainingJob",
        "trainingjobs",
    )
    assert EDL.crd_generated and EDL.crd_file == "generated/trainingjobs.paddlepaddle.org.yaml"
    assert EDL.legacy
    assert list(EDL.pod_templates(TrainingJob.model_validate(upstream_doc()))) == []
    job = TrainingJob.model_validate(upstream_doc())
    assert EDL.with_templates(job, {}) is job
    assert operator_rules(EDL, job, EDL.plan(job)).addresses == {}
