"""TFJob: defaults, webhook rules, and the reference's worked example (§4.1) literally."""

from __future__ import annotations

import json
from typing import Any

from tests.support.expand import expand_pods
from trainjobs.frameworks.tensorflow import FRAMEWORK as TF
from trainjobs.frameworks.tensorflow import TFJob

WORKED_TF_CONFIG = (
    '{"cluster":{"chief":["mnist-chief-0.kubeflow.svc:2222"],"ps":["mnist-ps-0.kubeflow.svc:2222"],'
    '"worker":["mnist-worker-0.kubeflow.svc:2222","mnist-worker-1.kubeflow.svc:2222"]},'
    '"task":{"type":"worker","index":1},"environment":"cloud"}'
)


def _replica(replicas: int | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:1"}]}}
    }
    if replicas is not None:
        spec["replicas"] = replicas
    spec.update(extra)
    return spec


def tfjob(specs: dict[str, Any], name: str = "mnist", **spec: Any) -> TFJob:
    return TFJob.model_validate(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": name, "namespace": "kubeflow"},
            "spec": {"tfReplicaSpecs": specs, **spec},
        }
    )


def worked_example() -> TFJob:
    return tfjob({"Chief": _replica(1), "Worker": _replica(2), "PS": _replica(1)})


def _objects(job: TFJob) -> dict[tuple[str, str], dict[str, Any]]:
    out = expand_pods(TF, TF.default(job))
    return {(o["kind"], o["metadata"]["name"]): o for o in out}


def test_worked_example_tf_config_is_byte_equal() -> None:
    pod = _objects(worked_example())[("Pod", "mnist-worker-1")]
    env = pod["spec"]["containers"][0]["env"]
    assert env == [{"name": "TF_CONFIG", "value": WORKED_TF_CONFIG}]


def test_worked_example_objects_labels_and_service() -> None:
    objects = _objects(worked_example())
    names = sorted(name for _, name in objects)
    assert names == sorted([f"mnist-{n}" for n in ("chief-0", "ps-0", "worker-0", "worker-1")] * 2)
    pod = objects[("Pod", "mnist-worker-1")]
    assert pod["metadata"] == {
        "name": "mnist-worker-1",
        "namespace": "kubeflow",
        "labels": {
            "training.kubeflow.org/operator-name": "tfjob-controller",
            "training.kubeflow.org/job-name": "mnist",
            "training.kubeflow.org/replica-type": "worker",
            "training.kubeflow.org/replica-index": "1",
        },
    }
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["containers"][0]["ports"] == [{"name": "tfjob-port", "containerPort": 2222}]
    chief = objects[("Pod", "mnist-chief-0")]
    assert chief["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert (
        "training.kubeflow.org/job-role"
        not in objects[("Pod", "mnist-worker-0")]["metadata"]["labels"]
    )
    service = objects[("Service", "mnist-worker-1")]
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": pod["metadata"]["labels"],
        "ports": [{"name": "tfjob-port", "port": 2222}],
    }
    assert service["metadata"]["labels"] == pod["metadata"]["labels"]


def test_without_chief_worker_zero_is_master() -> None:
    objects = _objects(tfjob({"Worker": _replica(2)}))
    labels = objects[("Pod", "mnist-worker-0")]["metadata"]["labels"]
    assert labels["training.kubeflow.org/job-role"] == "master"


def test_single_replica_job_gets_no_tf_config() -> None:
    pod = _objects(tfjob({"Worker": _replica(1)}))[("Pod", "mnist-worker-0")]
    assert "env" not in pod["spec"]["containers"][0]


def test_custom_port_is_used_in_tf_config() -> None:
    worker = _replica(2)
    worker["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "tfjob-port", "containerPort": 3333}
    ]
    pod = _objects(tfjob({"Worker": worker}))[("Pod", "mnist-worker-0")]
    config = json.loads(pod["spec"]["containers"][0]["env"][0]["value"])
    assert config["cluster"]["worker"] == [
        "mnist-worker-0.kubeflow.svc:3333",
        "mnist-worker-1.kubeflow.svc:3333",
    ]


def test_env_only_into_the_tensorflow_container_and_after_user_env() -> None:
    worker = _replica(2)
    worker["template"]["spec"]["containers"] = [
        {"name": "tensorflow", "image": "tf:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "busybox:1.36"},
    ]
    pod = _objects(tfjob({"Worker": worker}))[("Pod", "mnist-worker-1")]
    main, sidecar = pod["spec"]["containers"]
    assert [e["name"] for e in main["env"]] == ["A", "TF_CONFIG"]
    assert "env" not in sidecar
    assert "ports" not in sidecar


def test_dynamic_worker_sparse_cluster() -> None:
    job = tfjob({"Worker": _replica(2), "PS": _replica(1)}, enableDynamicWorker=True)
    objects = _objects(job)
    worker = objects[("Pod", "mnist-worker-1")]["spec"]["containers"][0]["env"][0]["value"]
    ps = objects[("Pod", "mnist-ps-0")]["spec"]["containers"][0]["env"][0]["value"]
    assert worker == (
        '{"cluster":{"worker":{"1":"mnist-worker-1.kubeflow.svc:2222"},'
        '"ps":["mnist-ps-0.kubeflow.svc:2222"]},"task":{"type":"worker","index":1}}'
    )
    assert ps == (
        '{"cluster":{"worker":{},"ps":["mnist-ps-0.kubeflow.svc:2222"]},'
        '"task":{"type":"ps","index":0}}'
    )


def test_defaults_are_explicit_on_the_operator_target() -> None:
    job = tfjob({"worker": _replica()})
    manifest = TF.operator_manifest(TF.default(job))
    assert manifest["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}
    worker = manifest["spec"]["tfReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 1
    assert worker["restartPolicy"] == "Never"
    assert worker["template"]["spec"]["containers"][0]["ports"] == [
        {"name": "tfjob-port", "containerPort": 2222}
    ]
    # the user's input is never modified
    assert "ports" not in job.spec.tf_replica_specs["worker"].template["spec"]["containers"][0]


def test_exit_code_restart_policy_becomes_never_on_the_pod() -> None:
    pod = _objects(tfjob({"Worker": _replica(2, restartPolicy="ExitCode")}))[
        ("Pod", "mnist-worker-0")
    ]
    assert pod["spec"]["restartPolicy"] == "Never"


def test_validation_findings() -> None:
    job = tfjob(
        {
            "Chief": _replica(1),
            "Master": _replica(1),
            "Worker": {"template": {"spec": {"containers": [{"name": "tf", "image": ""}]}}},
        },
        name="Bad_Name",
    )
    findings = {(f.code, f.path) for f in TF.validate(TF.default(job))}
    assert findings == {
        ("name.dns1035", "metadata.name"),
        ("tfjob.chief_and_master", "spec.tfReplicaSpecs"),
        ("template.default_container", "spec.tfReplicaSpecs.Worker.template.spec.containers"),
        ("template.image", "spec.tfReplicaSpecs.Worker.template.spec.containers[0].image"),
    }


def test_addresses_name_the_chief() -> None:
    assert TF.addresses(TF.default(worked_example())) == {
        "chief": "mnist-chief-0.kubeflow.svc:2222"
    }
