"""PyTorchJob: the reference's worked example (§4.2) literally, elastic mode, HPA, rules."""

from __future__ import annotations

from typing import Any

from tests.support.expand import expand_pods
from trainjobs.frameworks.pytorch import FRAMEWORK as PT
from trainjobs.frameworks.pytorch import PyTorchJob

WORKED_WORKER_1_ENV = [
    ("PYTHONUNBUFFERED", "1"),
    ("MASTER_PORT", "23456"),
    ("PET_MASTER_PORT", "23456"),
    ("MASTER_ADDR", "mnist-master-0"),
    ("PET_MASTER_ADDR", "mnist-master-0"),
    ("WORLD_SIZE", "3"),
    ("RANK", "2"),
    ("PET_NODE_RANK", "2"),
    ("PET_NPROC_PER_NODE", "auto"),
    ("PET_NNODES", "3"),
]


def _replica(replicas: int) -> dict[str, Any]:
    return {
        "replicas": replicas,
        "template": {"spec": {"containers": [{"name": "pytorch", "image": "pt:1"}]}},
    }


def ptjob(specs: dict[str, Any], **spec: Any) -> PyTorchJob:
    return PyTorchJob.model_validate(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "mnist", "namespace": "kubeflow"},
            "spec": {"pytorchReplicaSpecs": specs, **spec},
        }
    )


def _objects(job: PyTorchJob) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(PT, PT.default(job))}


def _env(pod: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["name"], e["value"]) for e in pod["spec"]["containers"][0]["env"]]


def worked_example() -> PyTorchJob:
    return ptjob({"Master": _replica(1), "Worker": _replica(2)})


def test_worked_example_worker_env_is_exact() -> None:
    assert _env(_objects(worked_example())[("Pod", "mnist-worker-1")]) == WORKED_WORKER_1_ENV


def test_worked_example_master() -> None:
    master = _objects(worked_example())[("Pod", "mnist-master-0")]
    expected = [(k, "0" if k in ("RANK", "PET_NODE_RANK") else v) for k, v in WORKED_WORKER_1_ENV]
    assert _env(master) == expected
    assert "initContainers" not in master["spec"]
    assert master["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert master["spec"]["restartPolicy"] == "OnFailure"


def test_worked_example_worker_init_container_and_services() -> None:
    objects = _objects(worked_example())
    init = objects[("Pod", "mnist-worker-1")]["spec"]["initContainers"]
    assert init == [
        {
            "name": "init-pytorch",
            "image": "alpine:3.10",
            "imagePullPolicy": "IfNotPresent",
            "resources": {
                "limits": {"cpu": "100m", "memory": "20Mi"},
                "requests": {"cpu": "50m", "memory": "10Mi"},
            },
            "command": [
                "sh",
                "-c",
                "err=1;for i in $(seq 100); do if nslookup mnist-master-0; then err=0 && break; "
                "fi;echo waiting for master; sleep 2; done; exit $err",
            ],
        }
    ]
    services = sorted(name for kind, name in objects if kind == "Service")
    assert services == ["mnist-master-0", "mnist-worker-0", "mnist-worker-1"]
    for name in services:
        assert objects[("Service", name)]["spec"]["ports"] == [
            {"name": "pytorchjob-port", "port": 23456}
        ]


def test_env_goes_into_every_container() -> None:
    job = worked_example()
    spec = job.spec.pytorch_replica_specs["Worker"].template["spec"]
    spec["containers"].append({"name": "logger", "image": "busybox:1.36"})
    pod = _objects(job)[("Pod", "mnist-worker-0")]
    assert [e["name"] for e in pod["spec"]["containers"][1]["env"]][:2] == [
        "PYTHONUNBUFFERED",
        "MASTER_PORT",
    ]


def test_numeric_nproc_multiplies_world_size() -> None:
    env = dict(
        _env(
            _objects(ptjob({"Master": _replica(1), "Worker": _replica(3)}, nprocPerNode="4"))[
                ("Pod", "mnist-worker-0")
            ]
        )
    )
    assert env["WORLD_SIZE"] == "16"
    assert env["PET_NPROC_PER_NODE"] == "4"
    assert env["PET_NNODES"] == "4"


def test_elastic_env_and_defaults() -> None:
    job = ptjob(
        {"Worker": _replica(2)},
        elasticPolicy={
            "maxReplicas": 4,
            "rdzvId": "run-1",
            "rdzvConf": [{"key": "timeout", "value": "900"}, {"key": "a", "value": "b"}],
            "maxRestarts": 3,
            "standalone": True,
        },
    )
    env = _env(_objects(job)[("Pod", "mnist-worker-1")])
    assert env == [
        ("PYTHONUNBUFFERED", "1"),
        ("PET_NPROC_PER_NODE", "auto"),
        ("PET_RDZV_ENDPOINT", "mnist-worker-0:23456"),
        ("PET_RDZV_BACKEND", "c10d"),
        ("PET_NNODES", "4:4"),
        ("PET_MAX_RESTARTS", "3"),
        ("PET_RDZV_ID", "run-1"),
        ("PET_RDZV_CONF", "timeout=900,a=b"),
        ("PET_STANDALONE", ""),
    ]


def test_elastic_bounds_default_from_workers() -> None:
    job = PT.default(ptjob({"Worker": _replica(3)}, elasticPolicy={}))
    assert isinstance(job, PyTorchJob)
    assert job.spec.elastic_policy is not None
    assert (job.spec.elastic_policy.min_replicas, job.spec.elastic_policy.max_replicas) == (3, 3)


def test_elastic_metrics_make_no_hpa_on_the_pods_target() -> None:
    # training-operator@078ec30f pkg/controller.v1/pytorch/hpa.go#L80-L92: the HPA's
    # scaleTargetRef is the PyTorchJob, which the pods target does not create.
    metric = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
    }
    job = ptjob(
        {"Worker": _replica(2)},
        elasticPolicy={"minReplicas": 1, "maxReplicas": 3, "metrics": [metric]},
    )
    assert [kind for kind, _ in _objects(job)].count("HorizontalPodAutoscaler") == 0
    (finding,) = PT.pods_findings(PT.default(job))
    assert finding.render() == (
        "warning: spec.elasticPolicy.metrics: the operator would scale the Workers with an "
        "HPA on the PyTorchJob; on the pods target there is no PyTorchJob, so no HPA: the "
        "Worker count stays as rendered (torchrun still tolerates workers leaving and "
        "rejoining within minReplicas..maxReplicas); fix: change Worker replicas in the stack "
        "to scale, or use the operator target for autoscaling; remove metrics to silence this"
    )


def test_webhook_rules() -> None:
    job = ptjob(
        {"Master": _replica(2), "Worker": _replica(0)},
        nprocPerNode="many",
        elasticPolicy={"nProcPerNode": 2, "minReplicas": 3, "maxReplicas": 2},
    )
    findings = {(f.code, f.path, f.severity.value) for f in PT.validate(PT.default(job))}
    assert findings == {
        ("pytorch.master_replicas", "spec.pytorchReplicaSpecs.Master.replicas", "error"),
        ("pytorch.worker_replicas", "spec.pytorchReplicaSpecs.Worker.replicas", "error"),
        ("pytorch.nproc_twice", "spec.elasticPolicy.nProcPerNode", "error"),
        ("pytorch.elastic_bounds", "spec.elasticPolicy.minReplicas", "error"),
        ("pytorch.nproc", "spec.nprocPerNode", "error"),
    }


def test_deprecated_elastic_nproc_is_a_warning() -> None:
    job = ptjob({"Worker": _replica(2)}, elasticPolicy={"nProcPerNode": 2})
    findings = PT.validate(PT.default(job))
    assert [(f.code, f.severity.value) for f in findings] == [
        ("pytorch.nproc_deprecated", "warning")
    ]
    env = dict(_env(_objects(job)[("Pod", "mnist-worker-0")]))
    assert env["PET_NPROC_PER_NODE"] == "2"
    assert "auto" not in env.values()


def test_addresses() -> None:
    assert PT.addresses(PT.default(worked_example())) == {"master": "mnist-master-0:23456"}


# ----- elastic mode against §4.2, line by line --------------------------------


def test_elastic_env_with_every_rendezvous_field_in_operator_order() -> None:
    job = ptjob(
        {"Master": _replica(1), "Worker": _replica(2)},
        nprocPerNode="2",
        elasticPolicy={
            "minReplicas": 1,
            "maxReplicas": 4,
            "rdzvBackend": "etcd-v2",
            "rdzvHost": "etcd.training.svc",
            "rdzvPort": 2379,
            "rdzvId": "42",
            "rdzvConf": [{"key": "read_timeout", "value": "60"}],
        },
    )
    assert _env(_objects(job)[("Pod", "mnist-master-0")]) == [
        ("PYTHONUNBUFFERED", "1"),
        ("MASTER_PORT", "23456"),
        ("PET_MASTER_PORT", "23456"),
        ("MASTER_ADDR", "mnist-master-0"),
        ("PET_MASTER_ADDR", "mnist-master-0"),
        ("WORLD_SIZE", "6"),
        ("RANK", "0"),
        ("PET_NODE_RANK", "0"),
        ("PET_NPROC_PER_NODE", "2"),
        ("PET_RDZV_ENDPOINT", "etcd.training.svc:2379"),
        ("PET_RDZV_BACKEND", "etcd-v2"),
        ("PET_NNODES", "1:4"),
        ("PET_RDZV_ID", "42"),
        ("PET_RDZV_CONF", "read_timeout=60"),
    ]


def test_any_rendezvous_backend_is_passed_on() -> None:
    # Neither the CRD nor the webhook limits rdzvBackend; torchrun also knows "static".
    job = ptjob({"Worker": _replica(2)}, elasticPolicy={"rdzvBackend": "static"})
    assert ("PET_RDZV_BACKEND", "static") in _env(_objects(job)[("Pod", "mnist-worker-0")])
    assert PT.validate(PT.default(job)) == []


def test_rdzv_conf_entries_may_leave_key_or_value_out() -> None:
    job = ptjob(
        {"Worker": _replica(1)},
        elasticPolicy={"rdzvConf": [{"key": "is_host"}, {"value": "x"}]},
    )
    assert ("PET_RDZV_CONF", "is_host=,=x") in _env(_objects(job)[("Pod", "mnist-worker-0")])


def test_elastic_bounds_default_from_each_other() -> None:
    for given, expected in (({"minReplicas": 2}, (2, 2)), ({"maxReplicas": 3}, (3, 3))):
        job = PT.default(ptjob({"Worker": _replica(1)}, elasticPolicy=given))
        assert isinstance(job, PyTorchJob)
        assert job.spec.elastic_policy is not None
        bounds = (job.spec.elastic_policy.min_replicas, job.spec.elastic_policy.max_replicas)
        assert bounds == expected


def test_empty_metrics_still_count_as_metrics() -> None:
    # hpa.go#L36 tests metrics for nil, so [] would get an HPA from the operator.
    job = ptjob({"Worker": _replica(2)}, elasticPolicy={"maxReplicas": 3, "metrics": []})
    assert [f.code for f in PT.pods_findings(PT.default(job))] == ["pytorch.elastic_hpa"]
    no_metrics = ptjob({"Worker": _replica(2)}, elasticPolicy={"maxReplicas": 3})
    assert PT.pods_findings(PT.default(no_metrics)) == []


def test_non_ascii_digits_are_not_a_process_count() -> None:
    job = ptjob({"Master": _replica(1), "Worker": _replica(1)}, nprocPerNode="²")
    assert [f.render() for f in PT.validate(PT.default(job))] == [
        "error: spec.nprocPerNode: nprocPerNode must be auto, cpu, gpu or a whole number "
        "(got '²'); fix: e.g. nprocPerNode: '4' for four processes per pod"
    ]


def test_managed_by_is_checked_as_the_webhook_does() -> None:
    job = ptjob({"Worker": _replica(1)}, runPolicy={"managedBy": "kueue"})
    assert [f.code for f in PT.validate(PT.default(job))] == ["run_policy.managed_by"]
