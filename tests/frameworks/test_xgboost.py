"""XGBoostJob: the reference's worked example (§4.3) literally, defaults, rules, properties."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.paths import EXAMPLES
from tests.support.v1jobs import (
    crd_problems,
    document,
    env,
    job,
    lines,
    not_advice,
    objects,
    render_checked,
    replica,
)
from trainjobs.check import run
from trainjobs.frameworks.xgboost import FRAMEWORK as XGB
from trainjobs.frameworks.xgboost import XGBoostJob
from trainjobs.spec import load_path

WORKED_WORKER_1_ENV = [
    {"name": "MASTER_PORT", "value": "9999"},
    {"name": "MASTER_ADDR", "value": "xgboost-dist-master-0"},
    {"name": "WORLD_SIZE", "value": "3"},
    {"name": "RANK", "value": "2"},
    {"name": "PYTHONUNBUFFERED", "value": "1"},
    {"name": "WORKER_PORT", "value": "9999"},
    {"name": "WORKER_ADDRS", "value": "xgboost-dist-worker-0,xgboost-dist-worker-1"},
]


def worked_example() -> XGBoostJob:
    xgb = job(
        XGB, {"Master": replica("xgboost", 1), "Worker": replica("xgboost", 2)}, "xgboost-dist"
    )
    assert isinstance(xgb, XGBoostJob)
    return xgb


def test_worked_example_worker_1_env_is_exact() -> None:
    assert env(objects(XGB, worked_example())[("Pod", "xgboost-dist-worker-1")]) == (
        WORKED_WORKER_1_ENV
    )


def test_master_env_labels_and_restart_policy() -> None:
    out = objects(XGB, worked_example())
    master = out[("Pod", "xgboost-dist-master-0")]
    assert [e["value"] for e in env(master)] == [
        "9999",
        "xgboost-dist-master-0",
        "3",
        "0",
        "1",
        "9999",
        "xgboost-dist-worker-0,xgboost-dist-worker-1",
    ]
    assert master["metadata"]["labels"] == {
        "training.kubeflow.org/operator-name": "xgboostjob-controller",
        "training.kubeflow.org/job-name": "xgboost-dist",
        "training.kubeflow.org/replica-type": "master",
        "training.kubeflow.org/replica-index": "0",
        "training.kubeflow.org/job-role": "master",
    }
    assert master["spec"]["restartPolicy"] == "Never"
    worker = out[("Pod", "xgboost-dist-worker-0")]
    assert "training.kubeflow.org/job-role" not in worker["metadata"]["labels"]
    assert [e["value"] for e in env(worker)][3] == "1"


def test_services_expose_the_default_port() -> None:
    out = objects(XGB, worked_example())
    services = sorted(name for kind, name in out if kind == "Service")
    assert services == ["xgboost-dist-master-0", "xgboost-dist-worker-0", "xgboost-dist-worker-1"]
    service = out[("Service", "xgboost-dist-worker-1")]
    labels = {
        "training.kubeflow.org/operator-name": "xgboostjob-controller",
        "training.kubeflow.org/job-name": "xgboost-dist",
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "1",
    }
    assert service["metadata"]["labels"] == labels
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": labels,
        "ports": [{"name": "xgboostjob-port", "port": 9999}],
    }


def test_a_lone_master_gets_no_worker_list() -> None:
    pod = objects(XGB, job(XGB, {"Master": replica("xgboost")}, "solo"))[("Pod", "solo-master-0")]
    assert env(pod) == [
        {"name": "MASTER_PORT", "value": "9999"},
        {"name": "MASTER_ADDR", "value": "solo-master-0"},
        {"name": "WORLD_SIZE", "value": "1"},
        {"name": "RANK", "value": "0"},
        {"name": "PYTHONUNBUFFERED", "value": "1"},
    ]


def test_custom_ports_reach_master_and_worker_env() -> None:
    def with_port(port: int, replicas: int) -> dict[str, object]:
        spec = replica("xgboost", replicas)
        spec["template"]["spec"]["containers"][0]["ports"] = [
            {"name": "xgboostjob-port", "containerPort": port}
        ]
        return spec

    xgb = job(XGB, {"Master": with_port(1234, 1), "Worker": with_port(4321, 1)}, "ports")
    values = {e["name"]: e["value"] for e in env(objects(XGB, xgb)[("Pod", "ports-worker-0")])}
    assert (values["MASTER_PORT"], values["WORKER_PORT"]) == ("1234", "4321")


def test_defaults() -> None:
    defaulted = XGB.default(
        job(XGB, {"master": replica("xgboost"), "WORKER": replica("xgboost")}, "d")
    )
    assert isinstance(defaulted, XGBoostJob)
    manifest = defaulted.to_manifest()
    assert manifest["metadata"] == {"name": "d", "namespace": "kubeflow"}
    assert manifest["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}
    assert list(manifest["spec"]["xgbReplicaSpecs"]) == ["Master", "Worker"]
    for spec in manifest["spec"]["xgbReplicaSpecs"].values():
        assert spec["replicas"] == 1
        assert spec["restartPolicy"] == "Never"
        assert spec["template"]["spec"]["containers"][0]["ports"] == [
            {"name": "xgboostjob-port", "containerPort": 9999}
        ]


def test_webhook_rules_with_exact_messages() -> None:
    no_master = job(XGB, {"Worker": replica("xgboost", 2)}, "x")
    assert lines(XGB, no_master) == [
        "error: spec.xgbReplicaSpecs.Master: an XGBoostJob needs a Master (it runs the "
        "Rabit tracker); fix: add spec.xgbReplicaSpecs.Master with replicas: 1"
    ]
    bad = job(
        XGB,
        {"Master": replica("xgboost", 2), "PS": replica("main")},
        "Bad_Name",
        runPolicy={"managedBy": "example.com/mine"},
    )
    assert lines(XGB, bad) == [
        "error: metadata.name: the job name must be a DNS-1035 label: lowercase letters, "
        "digits and '-', starting with a letter and ending with a letter or digit (e.g. "
        "'bad-name') (got 'Bad_Name'); fix: rename the job; every pod and service is named "
        "after it",
        "error: spec.xgbReplicaSpecs.PS: XGBoostJob has no replica type 'PS' (got 'PS'); "
        "fix: use one of Master, Worker",
        "error: spec.xgbReplicaSpecs.PS.template.spec.containers: no container is named "
        "'xgboost'; the operator reads ports and exit codes from that container (got "
        "['main']); fix: name the training container 'xgboost'",
        "error: spec.runPolicy.managedBy: the webhook accepts only kubeflow.org/training-operator "
        "or kueue.x-k8s.io/multikueue (got 'example.com/mine'); fix: remove managedBy (default "
        "kubeflow.org/training-operator) or use one of these",
        "error: spec.xgbReplicaSpecs.Master.replicas: an XGBoostJob has exactly one Master "
        "(got 2); fix: set Master.replicas to 1 and add Worker replicas instead",
    ]


def test_multikueue_is_accepted() -> None:
    xgb = job(
        XGB,
        {"Master": replica("xgboost")},
        "queued",
        runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"},
    )
    assert lines(XGB, xgb) == []


def test_operator_output_validates_against_the_vendored_crd() -> None:
    assert XGB.crd_file == "training-operator-v1.9.4/kubeflow.org_xgboostjobs.yaml"
    assert crd_problems(XGB, worked_example()) == []
    rendering, _ = render_checked(document(XGB, {"Master": replica("xgboost")}, "x"), "operator")
    assert not_advice(rendering.findings) == []


def test_addresses_and_success_rule() -> None:
    assert XGB.addresses(XGB.default(worked_example())) == {"master": "xgboost-dist-master-0:9999"}
    assert XGB.success_rule == "when the Master succeeds"


def test_example_is_the_worked_example() -> None:
    rendering = run(load_path(EXAMPLES / "xgboost-dist" / "xgboostjob.yaml"), target="pods")
    pods = {m["metadata"]["name"]: m for m in rendering.manifests if m["kind"] == "Pod"}
    assert sorted(pods) == [
        "xgboost-dist-master-0",
        "xgboost-dist-worker-0",
        "xgboost-dist-worker-1",
    ]
    assert env(pods["xgboost-dist-worker-1"]) == WORKED_WORKER_1_ENV


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workers=st.integers(0, 8), target=st.sampled_from(["operator", "pods"]))
def test_any_worker_count_renders_clean_and_deterministic(workers: int, target: str) -> None:
    doc = document(
        XGB, {"Master": replica("xgboost", 1), "Worker": replica("xgboost", workers)}, "prop"
    )
    first, text = render_checked(doc, target)
    _, again = render_checked(doc, target)
    assert text == again
    assert not_advice(first.findings) == []
    pods = [m for m in first.manifests if m["kind"] == "Pod"]
    assert len(pods) == (1 + workers if target == "pods" else 0)
    for pod in pods:
        values = {e["name"]: e["value"] for e in env(pod)}
        assert values["WORLD_SIZE"] == str(1 + workers)
        assert ("WORKER_ADDRS" in values) == (workers > 0)
