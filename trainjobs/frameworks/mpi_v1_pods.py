"""The Training Operator v1.9.4's expansion of an MPIJob ``kubeflow.org/v1`` (§4.7).

Pure functions of a *defaulted* :class:`trainjobs.frameworks.mpi_v1.MPIJobV1`;
the module docstring of ``frameworks.mpi_v1`` lists where they deviate from the
operator and why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trainjobs.frameworks._mpi import (
    CONFIG_MOUNT_PATH,
    HOST_FILES,
    HOSTFILE_PATH,
    MODE_SCRIPT,
    config_map,
    config_mount,
    config_volume,
    launcher_name,
    nvidia_hidden_env,
    object_labels,
    pod_restart_policy,
    worker_name,
)
from trainjobs.frameworks.kubeflow_v1 import (
    LABEL_JOB_ROLE,
    LABEL_REPLICA_INDEX,
    env_var,
)
from trainjobs.k8s.images import KUBECTL_DELIVERY_IMAGE
from trainjobs.k8s.pods import spec_containers as containers
from trainjobs.plan.expansion import Expansion, PodPlan
from trainjobs.plan.objects import (
    ConfigMapPlan,
    ObjectPlan,
    RoleBindingPlan,
    RolePlan,
    ServiceAccountPlan,
)

if TYPE_CHECKING:
    from trainjobs.frameworks._mpi_v1_model import MPIJobV1

__all__ = [
    "KUBEXEC",
    "discover_hosts",
    "expand",
    "hostfile",
    "kubexec",
    "launcher_is_gpu",
]

KUBEXEC = "kubexec.sh"
KUBECTL_VOLUME = "mpi-job-kubectl"
KUBECTL_MOUNT_PATH = "/opt/kube"

LabelsOf = Callable[["MPIJobV1", str, int], dict[str, str]]
"""The engine's four replica labels (``KubeflowV1Framework.labels``)."""


def expand(job: MPIJobV1, labels: LabelsOf) -> Expansion:
    """ServiceAccount, ConfigMap, Role, RoleBinding, worker Pods and the launcher Pod."""
    gpu = launcher_is_gpu(job)
    first: list[ObjectPlan] = []
    if not _launcher_spec(job).get("serviceAccountName"):
        first.append(ServiceAccountPlan(launcher_name(job.name), object_labels(job.name)))
    first += [_config_map(job, gpu), _role(job), _role_binding(job)]
    pods = [_worker(job, i, labels(job, "Worker", i)) for i in range(job.replicas("Worker"))]
    launcher_labels = labels(job, "Launcher", 0)
    del launcher_labels[LABEL_REPLICA_INDEX]
    launcher_labels[LABEL_JOB_ROLE] = "master"
    pods.append(_launcher(job, gpu, launcher_labels))
    return Expansion(pods=pods, first=first)


def launcher_is_gpu(job: MPIJobV1) -> bool:
    """The operator's test: a Launcher container limit whose name contains ``gpu``.

    (Its other test, a name ending in ``.com/gpu``, is a case of this one.)
    """
    return any(
        "gpu" in str(resource)
        for container in containers(_launcher_spec(job))
        for resource in ((container.get("resources") or {}).get("limits") or {})
    )


def _slots(job: MPIJobV1) -> int:
    return 1 if job.spec.slots_per_worker is None else job.spec.slots_per_worker


def kubexec(job: MPIJobV1) -> str:
    """``kubexec.sh``: OpenMPI's rsh agent; runs the command in a worker by kubectl exec."""
    script = (
        f"#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n{KUBECTL_MOUNT_PATH}/kubectl exec ${{POD_NAME}}"
    )
    if job.spec.main_container:
        script += f" --container {job.spec.main_container}"
    return script + ' -- /bin/sh -c "$*"'


def hostfile(job: MPIJobV1, gpu: bool) -> str:
    """``<pod> slots=N`` per worker, after the launcher's own line when it has a GPU."""
    names = [worker_name(job.name, i) for i in range(job.replicas("Worker"))]
    if gpu:
        names.insert(0, launcher_name(job.name))
    return "".join(f"{name} slots={_slots(job)}\n" for name in names)


def discover_hosts(job: MPIJobV1, gpu: bool) -> str:
    """``discover_hosts.sh`` as the operator writes it once every worker runs.

    Byte for byte, including its quirks: lines are *prefixed* with a newline,
    the GPU launcher's line also ends with one, workers are sorted by name.
    """
    slots = _slots(job)
    script = "#!/bin/sh"
    if gpu:
        script += f"\necho {launcher_name(job.name)}:{slots}\n"
    workers = sorted(worker_name(job.name, i) for i in range(job.replicas("Worker")))
    return script + "".join(f"\necho {name}:{slots}" for name in workers)


def _launcher_spec(job: MPIJobV1) -> dict[str, Any]:
    launcher = job.spec.mpi_replica_specs["Launcher"]
    return dict(launcher.template.get("spec") or {})


def _service_account(job: MPIJobV1) -> str:
    return str(_launcher_spec(job).get("serviceAccountName") or launcher_name(job.name))


def _config_map(job: MPIJobV1, gpu: bool) -> ConfigMapPlan:
    return config_map(
        job.name,
        hostfile(job, gpu),
        discover_hosts(job, gpu),
        {KUBEXEC: kubexec(job)},
    )


def _role(job: MPIJobV1) -> RolePlan:
    rules: list[dict[str, Any]] = [
        {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]}
    ]
    workers = [worker_name(job.name, i) for i in range(job.replicas("Worker"))]
    if workers:
        rules.append(
            {
                "verbs": ["create"],
                "apiGroups": [""],
                "resources": ["pods/exec"],
                "resourceNames": workers,
            }
        )
    return RolePlan(launcher_name(job.name), rules, object_labels(job.name))


def _role_binding(job: MPIJobV1) -> RoleBindingPlan:
    name = launcher_name(job.name)
    return RoleBindingPlan(name, _service_account(job), object_labels(job.name))


def _worker(job: MPIJobV1, index: int, own: dict[str, str]) -> PodPlan:
    replica = job.spec.mpi_replica_specs["Worker"]
    return PodPlan(
        role="Worker",
        name=worker_name(job.name, index),
        labels=own,
        restart_policy=pod_restart_policy(replica.restart_policy, "Never"),
        copy_finalizers=False,
        # An idle pod the launcher execs ranks into.
        main_command=("sleep",),
        main_args=("365d",),
        main_command_if="no_command",
        # Open MPI checks for the rsh agent's path on every rank, workers included.
        main_mounts=(config_mount(),),
        volumes=(config_volume(job.name, [(KUBEXEC, MODE_SCRIPT)]),),
    )


def _kubectl_delivery(job: MPIJobV1) -> dict[str, Any]:
    resources = {"cpu": "100m", "ephemeral-storage": "5Gi", "memory": "512Mi"}
    return {
        "name": "kubectl-delivery",
        "image": KUBECTL_DELIVERY_IMAGE,
        "env": [env_var("TARGET_DIR", KUBECTL_MOUNT_PATH), env_var("NAMESPACE", job.namespace)],
        "resources": {"limits": dict(resources), "requests": dict(resources)},
        "volumeMounts": [
            {"name": KUBECTL_VOLUME, "mountPath": KUBECTL_MOUNT_PATH},
            config_mount(),
        ],
        "imagePullPolicy": "IfNotPresent",
    }


def _launcher_env(existing: list[dict[str, Any]], gpu: bool) -> list[dict[str, Any]]:
    kubexec_path = f"{CONFIG_MOUNT_PATH}/{KUBEXEC}"
    env = [
        env_var("OMPI_MCA_plm_rsh_agent", kubexec_path),
        env_var("OMPI_MCA_orte_default_hostfile", HOSTFILE_PATH),
    ]
    if not gpu:
        env += nvidia_hidden_env()
    # Intel MPI's bootstrap defaults only where the user set none.
    names = {e.get("name") for e in existing}
    if "I_MPI_HYDRA_BOOTSTRAP" not in names:
        env.append(env_var("I_MPI_HYDRA_BOOTSTRAP", "rsh"))
    if "I_MPI_HYDRA_BOOTSTRAP_EXEC" not in names:
        env.append(env_var("I_MPI_HYDRA_BOOTSTRAP_EXEC", kubexec_path))
    return env


def _launcher(job: MPIJobV1, gpu: bool, own: dict[str, str]) -> PodPlan:
    replica = job.spec.mpi_replica_specs["Launcher"]
    written = containers(_launcher_spec(job))
    return PodPlan(
        role="Launcher",
        name=launcher_name(job.name),
        labels=own,
        env=_launcher_env(list(written[0].get("env") or []) if written else [], gpu),
        env_into=0,
        init_containers=[_kubectl_delivery(job)],
        restart_policy=pod_restart_policy(replica.restart_policy, "Never"),
        copy_finalizers=False,
        service_account=launcher_name(job.name),
        main_mounts=(
            {"name": KUBECTL_VOLUME, "mountPath": KUBECTL_MOUNT_PATH},
            config_mount(),
        ),
        volumes=(
            {"name": KUBECTL_VOLUME, "emptyDir": {}},
            config_volume(job.name, [(KUBEXEC, MODE_SCRIPT), *HOST_FILES]),
        ),
    )
