"""What both MPIJob APIs share: object names, the ``/etc/mpi`` config volume, pod helpers.

The Training Operator's MPIJob (``kubeflow.org/v1``, kubectl exec) and the MPI
Operator's (``kubeflow.org/v2beta1``, SSH) name their objects alike —
``<job>-launcher``, ``<job>-worker-<i>``, ``<job>-config`` — mount that
ConfigMap at ``/etc/mpi`` and label every object that is not a pod ``app: <job>``.
Neither shortens names: the pods are found by those exact names (the hostfile,
the launcher's RBAC rule, the pods' hostnames).

Facts: kubeflow-operators.md §4.7 and §4.8.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from trainjobs.errors import Rule
from trainjobs.frameworks.kubeflow_v1 import env_var
from trainjobs.k8s.data import Manifest, PodTemplate, deep_copy
from trainjobs.plan.objects import ConfigMapPlan

__all__ = [
    "CONFIG_MOUNT_PATH",
    "CONFIG_VOLUME",
    "DISCOVER_HOSTS",
    "HOSTFILE",
    "HOSTFILE_PATH",
    "HOST_FILES",
    "LAUNCHER_MISSING",
    "LAUNCHER_REPLICAS",
    "MODE_READ_ONLY",
    "MODE_SCRIPT",
    "config_map",
    "config_mount",
    "config_name",
    "config_volume",
    "launcher_name",
    "nvidia_hidden_env",
    "object_labels",
    "pod_restart_policy",
    "template_parts",
    "with_labels",
    "worker_name",
]

CONFIG_VOLUME = "mpi-job-config"
"""Name of the volume holding the job's ConfigMap."""
CONFIG_MOUNT_PATH = "/etc/mpi"
"""Where that volume is mounted."""
HOSTFILE = "hostfile"
DISCOVER_HOSTS = "discover_hosts.sh"
MODE_SCRIPT = 0o555
"""File mode of the scripts in the config volume (r-x for everyone)."""
MODE_READ_ONLY = 0o444
"""File mode of the hostfile (r-- for everyone)."""
HOSTFILE_PATH = f"{CONFIG_MOUNT_PATH}/{HOSTFILE}"
"""Where mpirun reads the hostfile."""
HOST_FILES = ((HOSTFILE, MODE_READ_ONLY), (DISCOVER_HOSTS, MODE_SCRIPT))
"""The launcher's files of the config volume, each with its mode: the hostfile and the
script that lists the hosts."""

# Both operators' validation has these two rules, in the same words.
LAUNCHER_MISSING = Rule(
    "mpi.launcher_missing",
    "an MPIJob needs a Launcher replica spec",
    hint="add mpiReplicaSpecs.Launcher: the pod that runs mpirun, replicas 1",
)
LAUNCHER_REPLICAS = Rule(
    "mpi.launcher_replicas",
    "an MPIJob has exactly one Launcher",
    hint="set Launcher.replicas to 1; scale out with Worker.replicas",
)


def worker_name(job: str, index: int | str) -> str:
    """``<job>-worker-<index>``: a worker pod's name (and, with SSH, its hostname).

    ``index`` may also be a shell variable (``"$i"``) for scripts that loop over workers.
    """
    return f"{job}-worker-{index}"


def launcher_name(job: str) -> str:
    """``<job>-launcher``: the launcher (a Pod in v1, a batch/v1 Job in v2beta1)."""
    return f"{job}-launcher"


def config_name(job: str) -> str:
    """``<job>-config``: the ConfigMap with the hostfile and scripts."""
    return f"{job}-config"


def config_map(
    job: str, hosts: str, discover: str, more: Mapping[str, str] | None = None
) -> ConfigMapPlan:
    """The ConfigMap ``<job>-config``: the ``hostfile`` (``hosts``), ``discover_hosts.sh``
    (``discover``) and the ``more`` files an operator adds (none by default)."""
    data = {DISCOVER_HOSTS: discover, HOSTFILE: hosts, **(more or {})}
    return ConfigMapPlan(config_name(job), data, object_labels(job))


def config_volume(job: str, files: Iterable[tuple[str, int]]) -> dict[str, Any]:
    """The pod volume of the job's ConfigMap, holding ``files`` (key, file mode)."""
    items = [{"key": key, "path": key, "mode": mode} for key, mode in files]
    return {"name": CONFIG_VOLUME, "configMap": {"name": config_name(job), "items": items}}


def config_mount() -> dict[str, Any]:
    """A container's mount of the config volume at ``/etc/mpi`` (a new dict each call)."""
    return {"name": CONFIG_VOLUME, "mountPath": CONFIG_MOUNT_PATH}


def object_labels(job: str) -> dict[str, str]:
    """Labels of an object that is not a pod: both operators label it ``app: <job>``."""
    return {"app": job}


def pod_restart_policy(policy: str | None, default: str) -> str:
    """The pod's restartPolicy for a replica's: ``ExitCode`` has no pod equivalent → Never."""
    chosen = policy or default
    return "Never" if chosen == "ExitCode" else chosen


def nvidia_hidden_env() -> list[dict[str, Any]]:
    """Empty ``NVIDIA_*`` variables: a launcher that only starts ranks sees no GPU."""
    return [env_var("NVIDIA_VISIBLE_DEVICES", ""), env_var("NVIDIA_DRIVER_CAPABILITIES", "")]


def template_parts(template: PodTemplate) -> tuple[dict[str, Any], dict[str, Any]]:
    """A private copy of a pod template's metadata and spec, so expansion never aliases input."""
    copied = deep_copy(template)
    return dict(copied.get("metadata") or {}), dict(copied.get("spec") or {})


def with_labels(template_meta: Mapping[str, Any], own: Mapping[str, str]) -> Manifest:
    """Pod metadata: the template's labels with the operator's on top, and its annotations."""
    labels = {k: v for k, v in (template_meta.get("labels") or {}).items() if k not in own}
    labels.update(own)
    metadata: Manifest = {"labels": labels}
    if template_meta.get("annotations"):
        metadata["annotations"] = dict(template_meta["annotations"])
    return metadata
