"""MXJob (legacy, v1.8.1): the reference's worked example (§4.6) literally, MXTune, rules."""

from __future__ import annotations

import pytest
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
from trainjobs.errors import SpecError
from trainjobs.frameworks.mxnet import FRAMEWORK as MX
from trainjobs.frameworks.mxnet import MXJob
from trainjobs.spec import load_path, parse_documents

CLUSTER = (
    '{"scheduler":[{"url":"mxnet-job-scheduler-0","port":9091}],'
    '"server":[{"url":"mxnet-job-server-0","port":9091}],'
    '"worker":[{"url":"mxnet-job-worker-0","port":9091},{"url":"mxnet-job-worker-1","port":9091}]}'
)
WORKED_WORKER_1_ENV = [
    {
        "name": "MX_CONFIG",
        "value": '{"cluster":' + CLUSTER + ',"labels":{"scheduler":"","server":"","worker":""},'
        '"task":{"type":"worker","index":1}}',
    },
    {"name": "DMLC_PS_ROOT_PORT", "value": "9091"},
    {"name": "DMLC_PS_ROOT_URI", "value": "mxnet-job-scheduler-0"},
    {"name": "DMLC_NUM_SERVER", "value": "1"},
    {"name": "DMLC_NUM_WORKER", "value": "2"},
    {"name": "DMLC_ROLE", "value": "worker"},
    {"name": "DMLC_USE_KUBERNETES", "value": "1"},
    {"name": "DMLC_WORKER_ID", "value": "1"},
]
ADVICE = (
    "advice: kind: MXJob is deprecated: Training Operator v1.9.0 removed it; fix: the "
    "operator target needs Training Operator v1.8.1 or older; the pods target needs no operator"
)


def worked_example() -> MXJob:
    specs = {
        "Scheduler": replica("mxnet", 1),
        "Server": replica("mxnet", 1),
        "Worker": replica("mxnet", 2),
    }
    mx = job(MX, specs, "mxnet-job", jobMode="MXTrain")
    assert isinstance(mx, MXJob)
    return mx


def test_worked_example_worker_1_env_is_exact() -> None:
    pod = objects(MX, worked_example())[("Pod", "mxnet-job-worker-1")]
    assert env(pod) == WORKED_WORKER_1_ENV


def test_scheduler_and_server_env() -> None:
    out = objects(MX, worked_example())
    for name, role in (("mxnet-job-scheduler-0", "scheduler"), ("mxnet-job-server-0", "server")):
        assert env(out[("Pod", name)]) == [
            {
                "name": "MX_CONFIG",
                "value": '{"cluster":' + CLUSTER + ',"labels":{"scheduler":"","server":"",'
                '"worker":""},"task":{"type":"' + role + '","index":0}}',
            },
            *WORKED_WORKER_1_ENV[1:5],
            {"name": "DMLC_ROLE", "value": role},
            {"name": "DMLC_USE_KUBERNETES", "value": "1"},
        ]


def test_servers_carry_the_master_role_and_services_expose_the_port() -> None:
    out = objects(MX, worked_example())
    role = "training.kubeflow.org/job-role"
    pods = {name: pod for (kind, name), pod in out.items() if kind == "Pod"}
    assert {name: pod["metadata"]["labels"].get(role) for name, pod in pods.items()} == {
        "mxnet-job-scheduler-0": None,
        "mxnet-job-server-0": "master",
        "mxnet-job-worker-0": None,
        "mxnet-job-worker-1": None,
    }
    assert pods["mxnet-job-server-0"]["metadata"]["labels"] == {
        "training.kubeflow.org/operator-name": "mxjob-controller",
        "training.kubeflow.org/job-name": "mxnet-job",
        "training.kubeflow.org/replica-type": "server",
        "training.kubeflow.org/replica-index": "0",
        role: "master",
    }
    assert all(pod["spec"]["restartPolicy"] == "Never" for pod in pods.values())
    assert out[("Service", "mxnet-job-scheduler-0")]["spec"]["ports"] == [
        {"name": "mxjob-port", "port": 9091}
    ]


def test_tune_mode_types_keep_their_keys_and_labels_come_from_the_annotation() -> None:
    tuner_server = replica("mxnet", 1)
    tuner_server["template"]["metadata"] = {"annotations": {"tuner-server-key": "a<b>&c"}}
    specs = {
        "TunerTracker": replica("mxnet", 1),
        "tunerServer": tuner_server,
        "Tuner": replica("mxnet", 1),
    }
    mx = job(MX, specs, "tune", jobMode="MXTune")
    defaulted = MX.default(mx)
    assert isinstance(defaulted, MXJob)
    # v1.8.1 renames only Scheduler, Server and Worker keys to CamelCase.
    assert list(defaulted.spec.mx_replica_specs) == ["TunerTracker", "tunerServer", "Tuner"]
    pod = objects(MX, mx)[("Pod", "tune-tunerserver-0")]
    assert env(pod) == [
        {
            "name": "MX_CONFIG",
            "value": '{"cluster":{"tuner":[{"url":"tune-tuner-0","port":9091}],'
            '"tunerserver":[{"url":"tune-tunerserver-0","port":9091}],'
            '"tunertracker":[{"url":"tune-tunertracker-0","port":9091}]},'
            '"labels":{"tuner":"","tunerserver":"a\\u003cb\\u003e\\u0026c","tunertracker":""},'
            '"task":{"type":"tunerserver","index":0}}',
        },
        {"name": "DMLC_PS_ROOT_PORT", "value": "0"},
        {"name": "DMLC_PS_ROOT_URI", "value": ""},
        {"name": "DMLC_NUM_SERVER", "value": "0"},
        {"name": "DMLC_NUM_WORKER", "value": "0"},
        {"name": "DMLC_ROLE", "value": "tunerserver"},
        {"name": "DMLC_USE_KUBERNETES", "value": "1"},
    ]
    assert lines(MX, mx) == [
        ADVICE,
        "warning: spec.mxReplicaSpecs.tunerServer: MXJob has no replica type 'tunerServer'; "
        "the operator starts its pods all the same, with DMLC_ROLE set to it (got "
        "'tunerServer'); fix: write it 'TunerServer' (v1.8.1 fixes the case of Scheduler, "
        "Server and Worker keys only)",
    ]


def test_defaults() -> None:
    specs = {"scheduler": replica("mxnet"), "WORKER": replica("mxnet")}
    spec = MX.default(job(MX, specs, "d", jobMode="MXTrain")).to_manifest()["spec"]
    assert spec["runPolicy"] == {"cleanPodPolicy": "None"}
    assert spec["jobMode"] == "MXTrain"
    assert list(spec["mxReplicaSpecs"]) == ["Scheduler", "Worker"]
    for replica_spec in spec["mxReplicaSpecs"].values():
        assert (replica_spec["replicas"], replica_spec["restartPolicy"]) == (1, "Never")
        assert replica_spec["template"]["spec"]["containers"][0]["ports"] == [
            {"name": "mxjob-port", "containerPort": 9091}
        ]


def test_rules_with_exact_messages() -> None:
    specs = {
        "Scheduler": replica("mxnet", 2),
        "Evaluator": replica("mxnet"),
        "Worker": replica("main"),
    }
    assert lines(MX, job(MX, specs, "mx", jobMode="Train")) == [
        "error: spec.mxReplicaSpecs.Worker.template.spec.containers: no container is named "
        "'mxnet'; the operator reads ports and exit codes from that container (got ['main']); "
        "fix: name the training container 'mxnet'",
        ADVICE,
        "error: spec.mxReplicaSpecs.Scheduler.replicas: an MXJob has at most one Scheduler "
        "(every pod dials scheduler 0) (got 2); fix: set Scheduler.replicas to 1",
        "warning: spec.jobMode: jobMode is neither MXTrain nor MXTune (the operator ignores it) "
        "(got 'Train'); fix: use MXTrain for Scheduler/Server/Worker jobs, MXTune for tuning",
        "warning: spec.mxReplicaSpecs.Evaluator: MXJob has no replica type 'Evaluator'; the "
        "operator starts its pods all the same, with DMLC_ROLE set to it (got 'Evaluator'); "
        "fix: use one of Scheduler, Server, Worker, TunerTracker, TunerServer, Tuner",
    ]


def test_job_mode_is_required_and_run_policy_has_no_managed_by() -> None:
    doc = document(MX, {"Worker": replica("mxnet")}, "mx", runPolicy={"managedBy": "x"})
    with pytest.raises(SpecError) as err:
        parse_documents([doc])
    assert [f.render() for f in err.value.findings] == [
        "error: jobs[0].spec.runPolicy.managedBy: unknown field (got 'x'); fix: remove it; "
        "it is not part of this object's API",
        "error: jobs[0].spec.jobMode: required field is missing; fix: add the required field "
        "'jobMode'",
    ]


def test_legacy_operator_and_crd() -> None:
    assert MX.legacy is True
    assert MX.operator == "Training Operator v1.8.1"
    assert MX.crd_file == "training-operator-v1.8.1/kubeflow.org_mxjobs.yaml"
    assert crd_problems(MX, worked_example()) == []


def test_addresses_and_success_rule() -> None:
    assert MX.addresses(MX.default(worked_example())) == {"scheduler": "mxnet-job-scheduler-0:9091"}
    assert MX.success_rule == (
        "when the Scheduler succeeds; a job of one Worker and no Scheduler or Server: when "
        "that Worker succeeds; any other job (e.g. Tuner types only) never"
    )


def test_example_is_the_worked_example() -> None:
    rendering = run(load_path(EXAMPLES / "mxnet-legacy" / "mxjob.yaml"), target="pods")
    pods = {m["metadata"]["name"]: m for m in rendering.manifests if m["kind"] == "Pod"}
    assert env(pods["mxnet-job-worker-1"]) == WORKED_WORKER_1_ENV
    assert [(f.code, f.path) for f in rendering.findings] == [("mxjob.deprecated", "jobs[0].kind")]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schedulers=st.integers(0, 1),
    servers=st.integers(0, 4),
    workers=st.integers(1, 6),
    target=st.sampled_from(["operator", "pods"]),
)
def test_any_replica_counts_render_clean_and_deterministic(
    schedulers: int, servers: int, workers: int, target: str
) -> None:
    specs = {"Worker": replica("mxnet", workers)}
    if schedulers:
        specs["Scheduler"] = replica("mxnet", schedulers)
    if servers:
        specs["Server"] = replica("mxnet", servers)
    doc = document(MX, specs, "prop", jobMode="MXTrain")
    first, text = render_checked(doc, target)
    _, again = render_checked(doc, target)
    assert text == again
    assert not_advice(first.findings) == []
    pods = [m for m in first.manifests if m["kind"] == "Pod"]
    assert len(pods) == (schedulers + servers + workers if target == "pods" else 0)
    for pod in pods:
        values = {e["name"]: e["value"] for e in env(pod)}
        assert (values["DMLC_NUM_SERVER"], values["DMLC_NUM_WORKER"]) == (
            str(servers),
            str(workers),
        )
        assert values["DMLC_PS_ROOT_URI"] == ("prop-scheduler-0" if schedulers else "")
