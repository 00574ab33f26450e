"""The MPI Operator v0.8's expansion of an MPIJob ``kubeflow.org/v2beta1`` (§4.8).

Pure functions of a *defaulted* :class:`trainjobs.frameworks.mpi.MPIJob`; the
module docstring of ``frameworks.mpi`` lists where they deviate from the
operator and why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainjobs.frameworks._mpi import (
    HOST_FILES,
    HOSTFILE_PATH,
    config_map,
    config_mount,
    config_volume,
    launcher_name,
    nvidia_hidden_env,
    object_labels,
    pod_restart_policy,
    template_parts,
    with_labels,
    worker_name,
)
from trainjobs.frameworks._mpi_model import ROOT_SSH_PATH
from trainjobs.frameworks.kubeflow_v1 import (
    LABEL_JOB_NAME,
    LABEL_JOB_ROLE,
    LABEL_OPERATOR_NAME,
    LABEL_REPLICA_INDEX,
    env_var,
)
from trainjobs.k8s.pods import spec_containers as containers
from trainjobs.plan.expansion import Expansion, PodPlan, ServicePlan
from trainjobs.plan.objects import BatchJobPlan, ConfigMapPlan, ObjectPlan, SshKeySecretPlan

if TYPE_CHECKING:
    from trainjobs.frameworks._mpi_model import MPIJob

__all__ = [
    "OPERATOR_NAME",
    "WAIT_IMAGE",
    "discover_hosts",
    "expand",
    "host",
    "hostfile",
    "launcher_env",
    "ssh_secret_name",
]

OPERATOR_NAME = "mpi-operator"
"""Value of the ``training.kubeflow.org/operator-name`` label."""
WAIT_IMAGE = "alpine:3.20.3"
"""Image of the ``wait-for-workers`` init container (its musl ``getent`` follows the DNS
search path; busybox ``nslookup`` does not reliably)."""
SSH_VOLUME = "ssh-auth"
SSH_MODE = 0o600
"""Key files' mode, set only under /root/.ssh: sshd refuses keys others can read."""
# mpirun and hydra retry while a worker's sshd is still starting.
_CONNECTION_ATTEMPTS = "-o ConnectionAttempts=10"
# The Secret's keys, as files: the ECDSA key goes where ssh looks first (id_rsa).
_SSH_ITEMS = (
    ("ssh-privatekey", "id_rsa"),
    ("ssh-publickey", "id_rsa.pub"),
    ("ssh-publickey", "authorized_keys"),
)


def expand(job: MPIJob) -> Expansion:
    """Service, ConfigMap, Secret, worker Pods and the launcher Job of ``job``.

    A suspended job gets no worker pods and a suspended launcher Job, as the
    operator does it.
    """
    workers = [] if _suspended(job) else [_worker(job, i) for i in range(job.replicas("Worker"))]
    first: list[ObjectPlan] = [_config_map(job), _ssh_secret(job)]
    return Expansion(
        services=[_service(job)], pods=workers, objects=[_launcher_job(job)], first=first
    )


def host(job: MPIJob, pod: str) -> str:
    """``<pod>.<job>.<ns>.svc``: a pod's name under the job's headless Service."""
    return f"{pod}.{job.name}.{job.namespace}.svc"


def _hosts(job: MPIJob) -> list[str]:
    names = [worker_name(job.name, i) for i in range(job.replicas("Worker"))]
    if job.spec.run_launcher_as_worker:
        names.insert(0, launcher_name(job.name))
    return [host(job, name) for name in names]


def hostfile(job: MPIJob) -> str:
    """The hostfile: ``host slots=N`` lines (OpenMPI) or ``host:N`` (Intel MPI, MPICH)."""
    slots = job.spec.slots_per_worker
    line = "{} slots={}\n" if job.spec.mpi_implementation == "OpenMPI" else "{}:{}\n"
    return "".join(line.format(name, slots) for name in _hosts(job))


def discover_hosts(job: MPIJob) -> str:
    """``discover_hosts.sh`` with every worker, as the operator writes it once all run.

    The operator sorts the running workers by pod name (so ``-10`` before ``-2``).
    """
    launcher = [host(job, launcher_name(job.name))] if job.spec.run_launcher_as_worker else []
    workers = sorted(worker_name(job.name, i) for i in range(job.replicas("Worker")))
    hosts = launcher + [host(job, name) for name in workers]
    return "#!/bin/sh\n" + "".join(f"echo {name}\n" for name in hosts)


def launcher_env(job: MPIJob) -> list[dict[str, Any]]:
    """The env the operator appends to the launcher's container[0], in its order."""
    slots = str(job.spec.slots_per_worker)
    env = [env_var("K_MPI_JOB_ROLE", "launcher")]
    implementation = job.spec.mpi_implementation
    if implementation == "OpenMPI":
        env += [
            env_var("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
            env_var("OMPI_MCA_orte_default_hostfile", HOSTFILE_PATH),
            env_var("OMPI_MCA_plm_rsh_args", _CONNECTION_ATTEMPTS),
            env_var("OMPI_MCA_orte_set_default_slots", slots),
        ]
    elif implementation == "Intel":
        env += [
            env_var("I_MPI_HYDRA_HOST_FILE", HOSTFILE_PATH),
            env_var("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", _CONNECTION_ATTEMPTS),
            env_var("I_MPI_PERHOST", slots),
        ]
    else:
        env += [
            env_var("HYDRA_HOST_FILE", HOSTFILE_PATH),
            env_var("HYDRA_LAUNCH_EXTRA_ARGS", _CONNECTION_ATTEMPTS),
        ]
    if not job.spec.run_launcher_as_worker:
        env += nvidia_hidden_env()
    return env


def ssh_secret_name(job: str) -> str:
    """``<job>-ssh``: the Secret with the job's SSH key pair."""
    return f"{job}-ssh"


def _suspended(job: MPIJob) -> bool:
    return bool(job.spec.run_policy and job.spec.run_policy.suspend)


def _service(job: MPIJob) -> ServicePlan:
    return ServicePlan(
        name=job.name,
        labels=object_labels(job.name),
        selector={LABEL_OPERATOR_NAME: OPERATOR_NAME, LABEL_JOB_NAME: job.name},
        ports=None,
        # Only when the launcher is a worker: it must resolve before it is Ready.
        publish_not_ready_addresses=bool(job.spec.run_launcher_as_worker),
    )


def _config_map(job: MPIJob) -> ConfigMapPlan:
    return config_map(job.name, hostfile(job), discover_hosts(job))


def _ssh_secret(job: MPIJob) -> SshKeySecretPlan:
    return SshKeySecretPlan(ssh_secret_name(job.name), object_labels(job.name))


def _ssh_volume(job: MPIJob) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ssh Secret's volume and its mount in the MPI container."""
    mount_path = job.spec.ssh_auth_mount_path or ROOT_SSH_PATH
    secret: dict[str, Any] = {
        "secretName": ssh_secret_name(job.name),
        "items": [{"key": key, "path": path} for key, path in _SSH_ITEMS],
    }
    if mount_path == ROOT_SSH_PATH:
        secret["defaultMode"] = SSH_MODE
    return {"name": SSH_VOLUME, "secret": secret}, {"name": SSH_VOLUME, "mountPath": mount_path}


def _mount_ssh(job: MPIJob, pod_spec: dict[str, Any], main: dict[str, Any]) -> None:
    volume, mount = _ssh_volume(job)
    pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), volume]
    main["volumeMounts"] = [*(main.get("volumeMounts") or []), mount]


def _place(job: MPIJob, pod_spec: dict[str, Any], hostname: str) -> None:
    pod_spec["hostname"] = hostname
    pod_spec["subdomain"] = job.name
    if pod_spec.get("hostNetwork"):
        # Lets a host-network pod still resolve the other pods' short names.
        pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"


def _worker(job: MPIJob, index: int) -> PodPlan:
    replica = job.spec.mpi_replica_specs["Worker"]
    name = worker_name(job.name, index)
    # With the launcher as rank host 0, workers count from 1.
    shift = 1 if job.spec.run_launcher_as_worker else 0
    own = {
        LABEL_OPERATOR_NAME: OPERATOR_NAME,
        LABEL_JOB_NAME: job.name,
        LABEL_JOB_ROLE: "worker",
        LABEL_REPLICA_INDEX: str(index + shift),
    }
    volume, mount = _ssh_volume(job)
    return PodPlan(
        role="Worker",
        name=name,
        labels=own,
        env=[env_var("K_MPI_JOB_ROLE", "worker")],
        env_into=0,
        restart_policy=pod_restart_policy(replica.restart_policy, "Never"),
        copy_finalizers=False,
        hostname=name,
        subdomain=job.name,
        # Lets a host-network pod still resolve the other pods' short names.
        host_network_dns=True,
        # cluster.local is hard-coded by the operator too.
        dns_searches=(f"{job.name}.{job.namespace}.svc.cluster.local",),
        main_command=("/usr/sbin/sshd", "-De"),
        main_mounts=(mount,),
        volumes=(volume,),
    )


def _launcher_job(job: MPIJob) -> BatchJobPlan:
    replica = job.spec.mpi_replica_specs["Launcher"]
    template_meta, spec = template_parts(replica.template)
    own = {
        LABEL_OPERATOR_NAME: OPERATOR_NAME,
        LABEL_JOB_NAME: job.name,
        LABEL_JOB_ROLE: "launcher",
    }
    if job.spec.run_launcher_as_worker:
        own[LABEL_REPLICA_INDEX] = "0"
    _place(job, spec, launcher_name(job.name))
    main = containers(spec)[0]
    main["env"] = [*(main.get("env") or []), *launcher_env(job)]
    _mount_ssh(job, spec, main)
    spec["restartPolicy"] = pod_restart_policy(replica.restart_policy, "OnFailure")
    spec["volumes"] = [*spec["volumes"], config_volume(job.name, HOST_FILES)]
    main["volumeMounts"] = [*main["volumeMounts"], config_mount()]
    workers = job.replicas("Worker")
    if job.spec.launcher_creation_policy == "WaitForWorkersReady" and workers:
        # First, so the user's init containers also run once the workers are Ready,
        # as they would in a launcher the operator creates only then.
        spec["initContainers"] = [
            _wait_for_workers(job, workers),
            *(spec.get("initContainers") or []),
        ]
    policy = job.spec.run_policy
    job_spec: dict[str, Any] = {}
    if policy and policy.active_deadline_seconds is not None:
        job_spec["activeDeadlineSeconds"] = policy.active_deadline_seconds
    if policy and policy.backoff_limit is not None:
        job_spec["backoffLimit"] = policy.backoff_limit
    job_spec["template"] = {"metadata": with_labels(template_meta, own), "spec": spec}
    if policy and policy.ttl_seconds_after_finished is not None:
        job_spec["ttlSecondsAfterFinished"] = policy.ttl_seconds_after_finished
    if _suspended(job):
        job_spec["suspend"] = True
    # No podReplacementPolicy: v0.8.0's newLauncherJob sets none (the Job's default
    # applies), as the real operator's launcher Job shows (tests/cluster).
    return BatchJobPlan(launcher_name(job.name), job_spec, object_labels(job.name))


def _wait_for_workers(job: MPIJob, workers: int) -> dict[str, Any]:
    """Stands in for ``WaitForWorkersReady``: block until each worker's hostname resolves.

    The headless Service publishes a worker's record once the pod is Ready.
    """
    pattern = host(job, worker_name(job.name, "$i"))
    script = (
        f'i=0; while [ "$i" -lt {workers} ]; do host={pattern}; '
        'until getent hosts "$host" >/dev/null; do echo "waiting for $host"; sleep 2; done; '
        "i=$((i+1)); done"
    )
    return {
        "name": "wait-for-workers",
        "image": WAIT_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", script],
        "resources": {
            "limits": {"cpu": "100m", "memory": "20Mi"},
            "requests": {"cpu": "50m", "memory": "10Mi"},
        },
    }
