"""MPIJob v1 (Training Operator v1.9.4, kubectl exec): §4.7 literally — kubexec.sh,
hostfile and discover_hosts.sh bytes, RBAC, pods — plus defaults and rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.expand import expand_pods
from trainjobs.check import crd_schema, run
from trainjobs.errors import Severity
from trainjobs.frameworks.mpi_v1 import FRAMEWORK as MPI_V1
from trainjobs.frameworks.mpi_v1 import MPIJobV1
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import parse_documents

KUBEXEC = (
    '#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME} -- /bin/sh -c "$*"'
)
LAUNCHER_ENV = [
    ("OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh"),
    ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
    ("NVIDIA_VISIBLE_DEVICES", ""),
    ("NVIDIA_DRIVER_CAPABILITIES", ""),
    ("I_MPI_HYDRA_BOOTSTRAP", "rsh"),
    ("I_MPI_HYDRA_BOOTSTRAP_EXEC", "/etc/mpi/kubexec.sh"),
]


def _replica(replicas: int | None = None, **container: Any) -> dict[str, Any]:
    spec = {"name": "mpi", "image": "horovod/horovod:0.28.1", **container}
    replica: dict[str, Any] = {"template": {"spec": {"containers": [spec]}}}
    if replicas is not None:
        replica["replicas"] = replicas
    return replica


def mpijob(specs: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    if specs is None:
        specs = {"Launcher": _replica(command=["mpirun", "pi"]), "Worker": _replica(2)}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "training"},
        "spec": {"mpiReplicaSpecs": specs, **spec},
    }


def _defaulted(doc: dict[str, Any]) -> MPIJobV1:
    job = MPI_V1.default(MPIJobV1.model_validate(doc))
    assert isinstance(job, MPIJobV1)
    return job


def objects(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    job = _defaulted(doc)
    assert [f for f in MPI_V1.validate(job) if f.severity is Severity.ERROR] == []
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(MPI_V1, job)}


def messages(doc: dict[str, Any]) -> list[str]:
    return [f.render() for f in MPI_V1.validate(_defaulted(doc))]


def _env(container: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["name"], e["value"]) for e in container.get("env", [])]


def _gpu_launcher() -> dict[str, Any]:
    return mpijob(
        {
            "Launcher": _replica(resources={"limits": {"nvidia.com/gpu": 1}}),
            "Worker": _replica(2),
        },
        slotsPerWorker=2,
    )


# ----- ConfigMap bytes --------------------------------------------------------


def test_config_map_is_exact() -> None:
    config = objects(mpijob())[("ConfigMap", "pi-config")]
    assert config["metadata"] == {
        "name": "pi-config",
        "namespace": "training",
        "labels": {"app": "pi"},
    }
    assert config["data"] == {
        "discover_hosts.sh": "#!/bin/sh\necho pi-worker-0:1\necho pi-worker-1:1",
        "hostfile": "pi-worker-0 slots=1\npi-worker-1 slots=1\n",
        "kubexec.sh": KUBEXEC,
    }


def test_kubexec_names_the_main_container() -> None:
    data = objects(mpijob(mainContainer="mpi"))[("ConfigMap", "pi-config")]["data"]
    assert data["kubexec.sh"] == (
        "#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n"
        '/opt/kube/kubectl exec ${POD_NAME} --container mpi -- /bin/sh -c "$*"'
    )


def test_gpu_launcher_is_a_host_too() -> None:
    data = objects(_gpu_launcher())[("ConfigMap", "pi-config")]["data"]
    assert data["hostfile"] == "pi-launcher slots=2\npi-worker-0 slots=2\npi-worker-1 slots=2\n"
    # The operator's bytes: the launcher line ends in a newline, every line starts with one.
    assert data["discover_hosts.sh"] == (
        "#!/bin/sh\necho pi-launcher:2\n\necho pi-worker-0:2\necho pi-worker-1:2"
    )


@pytest.mark.parametrize("resource", ["nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915"])
def test_gpu_launcher_rule(resource: str) -> None:
    doc = mpijob({"Launcher": _replica(resources={"limits": {resource: 1}}), "Worker": _replica(1)})
    launcher = objects(doc)[("Pod", "pi-launcher")]
    names = [name for name, _ in _env(launcher["spec"]["containers"][0])]
    assert "NVIDIA_VISIBLE_DEVICES" not in names


def test_zero_slots_stay_zero() -> None:
    data = objects(mpijob(slotsPerWorker=0))[("ConfigMap", "pi-config")]["data"]
    assert data["hostfile"] == "pi-worker-0 slots=0\npi-worker-1 slots=0\n"


# ----- RBAC ------------------------------------------------------------------


def test_rbac_objects_are_exact() -> None:
    objs = objects(mpijob())
    meta = {"name": "pi-launcher", "namespace": "training", "labels": {"app": "pi"}}
    assert objs[("ServiceAccount", "pi-launcher")] == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": meta,
    }
    assert objs[("Role", "pi-launcher")] == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta,
        "rules": [
            {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]},
            {
                "verbs": ["create"],
                "apiGroups": [""],
                "resources": ["pods/exec"],
                "resourceNames": ["pi-worker-0", "pi-worker-1"],
            },
        ],
    }
    assert objs[("RoleBinding", "pi-launcher")] == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta,
        "subjects": [{"kind": "ServiceAccount", "name": "pi-launcher", "namespace": "training"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pi-launcher"},
    }


def test_a_named_service_account_is_bound_not_created() -> None:
    doc = mpijob()
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["serviceAccountName"] = "mpi"
    objs = objects(doc)
    assert ("ServiceAccount", "pi-launcher") not in objs
    assert ("ServiceAccount", "mpi") not in objs
    subject = objs[("RoleBinding", "pi-launcher")]["subjects"][0]
    assert subject == {"kind": "ServiceAccount", "name": "mpi", "namespace": "training"}
    assert objs[("Pod", "pi-launcher")]["spec"]["serviceAccountName"] == "mpi"


def test_without_workers_the_launcher_may_exec_into_nothing() -> None:
    objs = objects(mpijob({"Launcher": _replica()}))
    assert objs[("Role", "pi-launcher")]["rules"] == [
        {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]}
    ]
    assert objs[("ConfigMap", "pi-config")]["data"]["hostfile"] == ""
    assert [key for key in objs if key[0] == "Pod"] == [("Pod", "pi-launcher")]


# ----- pods ------------------------------------------------------------------


def test_worker_pod() -> None:
    doc = mpijob()
    doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"] = {"labels": {"t": "x"}}
    pod = objects(doc)[("Pod", "pi-worker-1")]
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "pi-worker-1",
            "namespace": "training",
            "labels": {
                "t": "x",
                "training.kubeflow.org/operator-name": "mpijob-controller",
                "training.kubeflow.org/job-name": "pi",
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": "1",
            },
        },
        "spec": {
            "containers": [
                {
                    "name": "mpi",
                    "image": "horovod/horovod:0.28.1",
                    "command": ["sleep"],
                    "args": ["365d"],
                    "volumeMounts": [{"name": "mpi-job-config", "mountPath": "/etc/mpi"}],
                }
            ],
            "restartPolicy": "Never",
            "volumes": [
                {
                    "name": "mpi-job-config",
                    "configMap": {
                        "name": "pi-config",
                        "items": [{"key": "kubexec.sh", "path": "kubexec.sh", "mode": 0o555}],
                    },
                }
            ],
        },
    }


def test_worker_command_replaces_only_when_missing() -> None:
    doc = mpijob({"Launcher": _replica(), "Worker": _replica(1, args=["--x"])})
    container = objects(doc)[("Pod", "pi-worker-0")]["spec"]["containers"][0]
    assert (container["command"], container["args"]) == (["sleep"], ["365d"])
    doc = mpijob({"Launcher": _replica(), "Worker": _replica(1, command=["python", "w.py"])})
    container = objects(doc)[("Pod", "pi-worker-0")]["spec"]["containers"][0]
    assert (container["command"], "args" in container) == (["python", "w.py"], False)


def test_launcher_pod() -> None:
    launcher = objects(mpijob())[("Pod", "pi-launcher")]
    assert launcher["metadata"]["labels"] == {
        "training.kubeflow.org/operator-name": "mpijob-controller",
        "training.kubeflow.org/job-name": "pi",
        "training.kubeflow.org/replica-type": "launcher",
        "training.kubeflow.org/job-role": "master",
    }
    spec = launcher["spec"]
    assert spec["serviceAccountName"] == "pi-launcher"
    assert spec["restartPolicy"] == "Never"
    assert spec["initContainers"] == [
        {
            "name": "kubectl-delivery",
            "image": "ghcr.io/kubeflow/training-v1/kubectl-delivery:v1-4445c12",
            "env": [
                {"name": "TARGET_DIR", "value": "/opt/kube"},
                {"name": "NAMESPACE", "value": "training"},
            ],
            "resources": {
                "limits": {"cpu": "100m", "ephemeral-storage": "5Gi", "memory": "512Mi"},
                "requests": {"cpu": "100m", "ephemeral-storage": "5Gi", "memory": "512Mi"},
            },
            "volumeMounts": [
                {"name": "mpi-job-kubectl", "mountPath": "/opt/kube"},
                {"name": "mpi-job-config", "mountPath": "/etc/mpi"},
            ],
            "imagePullPolicy": "IfNotPresent",
        }
    ]
    container = spec["containers"][0]
    assert _env(container) == LAUNCHER_ENV
    assert container["volumeMounts"] == [
        {"name": "mpi-job-kubectl", "mountPath": "/opt/kube"},
        {"name": "mpi-job-config", "mountPath": "/etc/mpi"},
    ]
    assert spec["volumes"] == [
        {"name": "mpi-job-kubectl", "emptyDir": {}},
        {
            "name": "mpi-job-config",
            "configMap": {
                "name": "pi-config",
                "items": [
                    {"key": "kubexec.sh", "path": "kubexec.sh", "mode": 0o555},
                    {"key": "hostfile", "path": "hostfile", "mode": 0o444},
                    {"key": "discover_hosts.sh", "path": "discover_hosts.sh", "mode": 0o555},
                ],
            },
        },
    ]


def test_intel_bootstrap_env_is_kept_when_the_user_sets_it() -> None:
    doc = mpijob(
        {
            "Launcher": _replica(env=[{"name": "I_MPI_HYDRA_BOOTSTRAP", "value": "ssh"}]),
            "Worker": _replica(1),
        }
    )
    env = _env(objects(doc)[("Pod", "pi-launcher")]["spec"]["containers"][0])
    assert env == [("I_MPI_HYDRA_BOOTSTRAP", "ssh"), *LAUNCHER_ENV[:4], LAUNCHER_ENV[5]]


def test_exit_code_maps_to_never_and_on_failure_is_kept() -> None:
    doc = mpijob(
        {
            "Launcher": {**_replica(), "restartPolicy": "OnFailure"},
            "Worker": {**_replica(1), "restartPolicy": "ExitCode"},
        }
    )
    objs = objects(doc)
    assert objs[("Pod", "pi-launcher")]["spec"]["restartPolicy"] == "OnFailure"
    assert objs[("Pod", "pi-worker-0")]["spec"]["restartPolicy"] == "Never"


# ----- defaults ----------------------------------------------------------------


def test_defaults() -> None:
    job = _defaulted(mpijob({"Launcher": _replica(), "Worker": _replica()}))
    specs = job.spec.mpi_replica_specs
    assert (specs["Launcher"].replicas, specs["Launcher"].restart_policy) == (1, "Never")
    assert (specs["Worker"].replicas, specs["Worker"].restart_policy) == (0, "Never")
    assert job.spec.clean_pod_policy == "None"
    assert job.spec.run_policy is not None and job.spec.run_policy.clean_pod_policy == "None"
    assert job.spec.slots_per_worker is None
    assert job.metadata.namespace == "training"
    # No default port: unlike the other v1 kinds, MPIJob builds nothing from it.
    assert "ports" not in specs["Worker"].template["spec"]["containers"][0]


@pytest.mark.parametrize(
    ("top", "nested", "expected"),
    [
        ("All", None, ("All", "All")),
        (None, "Running", ("Running", "Running")),
        ("All", "Running", ("All", "Running")),
    ],
)
def test_clean_pod_policy_is_synced(
    top: str | None, nested: str | None, expected: tuple[str, str]
) -> None:
    spec: dict[str, Any] = {}
    if top:
        spec["cleanPodPolicy"] = top
    if nested:
        spec["runPolicy"] = {"cleanPodPolicy": nested}
    job = _defaulted(mpijob(**spec))
    assert job.spec.run_policy is not None
    assert (job.spec.clean_pod_policy, job.spec.run_policy.clean_pod_policy) == expected


def test_replica_keys_are_not_case_folded() -> None:
    job = _defaulted(mpijob({"Launcher": _replica(), "worker": _replica(1)}))
    assert sorted(job.spec.mpi_replica_specs) == ["Launcher", "worker"]


def test_operator_target_validates_against_the_v1_crd() -> None:
    rendering = run(parse_documents([mpijob(cleanPodPolicy="All")]), target="operator")
    (manifest,) = rendering.manifests
    assert manifest["apiVersion"] == "kubeflow.org/v1"
    assert manifest["spec"]["runPolicy"] == {"cleanPodPolicy": "All"}
    assert crd_schema.problems(manifest) == []


# ----- validation (ValidateV1MpiJobSpec) -------------------------------------------


def test_launcher_is_required() -> None:
    assert messages(mpijob({"Worker": _replica(1)})) == [
        "error: spec.mpiReplicaSpecs.Launcher: an MPIJob needs a Launcher replica spec; "
        "fix: add mpiReplicaSpecs.Launcher: the pod that runs mpirun, replicas 1"
    ]


def test_one_launcher() -> None:
    assert messages(mpijob({"Launcher": _replica(2)})) == [
        "error: spec.mpiReplicaSpecs.Launcher.replicas: an MPIJob has exactly one Launcher "
        "(got 2); fix: set Launcher.replicas to 1; scale out with Worker.replicas"
    ]


def test_replica_types_are_exact() -> None:
    assert messages(mpijob({"Launcher": _replica(), "worker": _replica(1)})) == [
        "error: spec.mpiReplicaSpecs.worker: MPIJob has no replica type 'worker' (got "
        "'worker'); fix: use Launcher or Worker, spelled exactly so (this API does not fold case)"
    ]


def test_containers_need_image_and_name() -> None:
    doc = mpijob(
        {
            "Launcher": {"template": {"spec": {"containers": []}}},
            "Worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": ""}]}}},
        }
    )
    assert messages(doc) == [
        "error: spec.mpiReplicaSpecs.Launcher.template.spec.containers: every replica needs at "
        "least one container; fix: add the MPI container first: the operator uses container[0]",
        "error: spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image: every container "
        "needs an image; fix: set image to a pinned tag, e.g. 'repo/trainer:1.0'",
        "error: spec.mpiReplicaSpecs.Worker.template.spec.containers[0].name: every container "
        "needs a name; fix: set name",
    ]


def test_warnings() -> None:
    doc = mpijob(
        cleanPodPolicy="All",
        runPolicy={"cleanPodPolicy": "Running", "managedBy": "kueue.x-k8s.io/multikueue"},
        mainContainer="trainer",
    )
    assert messages(doc) == [
        "warning: spec.cleanPodPolicy: the deprecated spec.cleanPodPolicy differs from "
        "runPolicy.cleanPodPolicy; the operator applies runPolicy's (Running) (got 'All'); "
        "fix: remove spec.cleanPodPolicy and keep runPolicy.cleanPodPolicy",
        "warning: spec.mainContainer: no Worker container has this name, so kubectl exec "
        "--container fails (got 'trainer'); fix: use one of ['mpi'] or remove mainContainer",
    ]


# ----- properties ----------------------------------------------------------------


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workers=st.integers(0, 12),
    slots=st.integers(1, 8),
    gpu=st.booleans(),
    target=st.sampled_from(["operator", "pods"]),
)
def test_any_valid_v1_mpijob_renders_checked_and_deterministic(
    workers: int, slots: int, gpu: bool, target: str
) -> None:
    launcher = _replica(command=["mpirun"])
    if gpu:
        container = launcher["template"]["spec"]["containers"][0]
        container["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    doc = mpijob(
        {"Launcher": launcher, "Worker": _replica(workers)},
        slotsPerWorker=slots,
    )
    first = run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    again = run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    assert dump_all(first.manifests) == dump_all(again.manifests)
    assert [f for f in first.findings if f.severity is Severity.ERROR] == []
    if target == "operator":
        return
    pods = [m for m in first.manifests if m["kind"] == "Pod"]
    assert len(pods) == workers + 1
    config = next(m for m in first.manifests if m["kind"] == "ConfigMap")
    assert len(config["data"]["hostfile"].splitlines()) == workers + gpu
