"""MPI: the MPIJob ``kubeflow.org/v2beta1`` of the MPI Operator v0.8 (SSH launcher).

A Launcher runs ``mpirun``, which reaches the Workers over SSH: every worker
runs ``sshd``, a headless Service ``<job>`` gives each pod a DNS name
``<pod>.<job>.<ns>.svc``, a ConfigMap ``<job>-config`` carries the hostfile,
and a Secret ``<job>-ssh`` holds one SSH key pair the job's pods share.

``pods`` target: the objects the operator would create (§4.8), with three
deviations, each because no operator is there to act at run time:

* ``discover_hosts.sh`` lists every worker. The operator rewrites it as
  workers start and stop, listing only *running* ones; a render is static.
  (Horovod elastic calls the script; mpirun itself reads the hostfile.)
* The SSH key pair is not generated at render time: the Secret holds
  placeholders (``trainjobs.k8s.generated``, one group per job) that the
  Pulumi components replace with a key generated once per stack and kept as a
  Pulumi secret. No render ever holds key material.
* ``launcherCreationPolicy: WaitForWorkersReady``: the launcher Job is created
  with the workers, and its pod starts with an init container
  ``wait-for-workers`` that waits until every worker's hostname resolves. The
  headless Service publishes a worker's record only once the pod is Ready —
  the operator's own condition. (With ``runLauncherAsWorker`` the Service
  publishes not-ready pods too, so the wait ends when every worker has an
  address; mpirun's ``ConnectionAttempts=10`` covers sshd still starting.)

Success rule: the launcher Job's result. Kubernetes' Job controller enforces
``backoffLimit``, ``activeDeadlineSeconds`` and ``ttlSecondsAfterFinished``
(copied from ``runPolicy``); nobody applies ``cleanPodPolicy``, so workers keep
running ``sshd`` until the stack is destroyed (as with the default ``None``).

Facts: kubeflow-operators.md §1, §4.8 (kubeflow/mpi-operator release-0.8,
pkg/controller/mpi_job_controller.go, pkg/apis/kubeflow/{v2beta1,validation}).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from trainjobs.errors import Finding, Rule
from trainjobs.frameworks import mpi_pods
from trainjobs.frameworks._container_rules import (
    PINNED_IMAGE_HINT,
    image_findings,
    no_containers,
    template_restart_policy,
)
from trainjobs.frameworks._mpi import (
    LAUNCHER_MISSING,
    LAUNCHER_REPLICAS,
    launcher_name,
    worker_name,
)
from trainjobs.frameworks._mpi_model import (
    MULTIKUEUE_MANAGER,
    OPERATOR_MANAGER,
    REPLICA_DEFAULTS,
    ROOT_SSH_PATH,
    MPIJob,
    MPIJobSpec,
    MPIRunPolicy,
)
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.capabilities import Gang, SuccessRule, TrainerConversion
from trainjobs.frameworks.kubeflow_v1 import ReplicaSpec
from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.names import DNS1035_LABEL, LABEL_MAX
from trainjobs.k8s.pods import spec_containers as containers
from trainjobs.plan import GangFacts, GangMember, PodSet, Replica, RunRules, SuccessPolicy
from trainjobs.plan.expansion import Expansion
from trainjobs.plan.trainer import ReplicatedJob, TrainerPlan, as_node

__all__ = ["FRAMEWORK", "MPI", "MPIJob", "MPIJobSpec", "MPIRunPolicy"]

_REPLICA_TYPES = ("Launcher", "Worker")
_RESTART_POLICIES = ("Never", "OnFailure")
JOB_BACKOFF_LIMIT = 6
"""Kubernetes' default ``backoffLimit`` of the launcher's batch/v1 Job when runPolicy sets none."""

# The operator's rules (and the Trainer's, for the trainer target), declared once.
HOSTNAME_LENGTH = Rule(
    "name.dns1035",
    "the worker hostname {last!r} has {length} characters; a DNS-1035 label has at most "
    f"{LABEL_MAX}",
    hint="shorten the job name to at most {most} characters",
)
HOSTNAME_LABEL = Rule(
    "name.dns1035",
    "the worker hostname {last!r} must be a DNS-1035 label: lowercase letters, digits and '-', "
    "starting with a letter",
    hint="rename the job; its pods' hostnames are made from it",
)
REPLICA_TYPE = Rule(
    "mpi.replica_type",
    "MPIJob has no replica type {rtype!r}; the MPI Operator ignores it",
    hint="use Launcher or Worker, spelled exactly so",
)
WORKER_REPLICAS = Rule(
    "mpi.worker_replicas",
    "Worker.replicas must be at least 1 (an unset count defaults to 0)",
    hint="set Worker.replicas to the number of worker pods, or remove the Worker spec",
)
RESTART_POLICY = Rule(
    "mpi.restart_policy",
    "the MPI Operator accepts only restartPolicy Never or OnFailure",
    hint="use OnFailure (the Launcher default) or Never (the Worker default)",
)
MANAGED_BY = Rule(
    "mpi.managed_by",
    f"managedBy must be {OPERATOR_MANAGER} or {MULTIKUEUE_MANAGER}",
    hint="remove managedBy to let the MPI Operator manage the job",
)
TRAINER_IMPLEMENTATION = Rule(
    "trainer.mpi_implementation",
    "Trainer v2.3 launches OpenMPI only",
    hint="use OpenMPI, or the operator or pods target",
)


class MPI(Framework[MPIJob], TrainerConversion, Gang, SuccessRule):
    """MPI programs (Horovod, OpenMPI, Intel MPI, MPICH) launched over SSH."""

    name = "mpi"
    title = "MPI (MPIJob v2beta1, SSH)"
    # MPI Operator v0.8.0 has no webhook: pkg/controller/mpi_job_controller.go syncHandler
    # runs validation.ValidateMPIJob (pkg/apis/kubeflow/validation/validation.go: the
    # worker host name is a DNS-1035 label, one Launcher, Worker replicas >= 1,
    # restartPolicy, containers, managedBy) and records a ValidationError event.
    controller_rules = frozenset(
        {
            "name.dns1035",
            "mpi.launcher_missing",
            "mpi.launcher_replicas",
            "mpi.worker_replicas",
            "mpi.restart_policy",
            "restart.framework",
            "mpi.managed_by",
            "template.containers",
        }
    )
    operator = "MPI Operator v0.8"
    # The v0.8 CRD's one enum (its other closed sets are the controller's).
    schema_enums = ("mpiImplementation",)
    crd_file = "mpi-operator-v0.8/kubeflow.org_mpijobs.yaml"
    success_rule = "when the launcher's batch/v1 Job completes"
    targets = ("operator", "pods", "trainer")
    # The MPI Operator runs the launcher as a batch Job (mpi_pods._launcher_job).
    job_roles = frozenset({"Launcher"})
    replica_types: ClassVar[tuple[str, ...]] = _REPLICA_TYPES
    restart_policies: ClassVar[tuple[str, ...]] = _RESTART_POLICIES
    reconciled_managed_by = OPERATOR_MANAGER

    def default(self, job: MPIJob) -> MPIJob:
        spec = job.spec
        specs: dict[str, ReplicaSpec] = {}
        for rtype, replica in spec.mpi_replica_specs.items():
            if rtype in REPLICA_DEFAULTS:
                replicas, policy = REPLICA_DEFAULTS[rtype]
                replica = replica.model_copy(
                    update={
                        "replicas": replicas if replica.replicas is None else replica.replicas,
                        "restart_policy": replica.restart_policy or policy,
                    }
                )
            specs[rtype] = replica
        run_policy = spec.run_policy or MPIRunPolicy()
        if run_policy.clean_pod_policy is None:
            run_policy = run_policy.model_copy(update={"clean_pod_policy": "None"})
        defaulted = spec.model_copy(
            update={
                "slots_per_worker": 1 if spec.slots_per_worker is None else spec.slots_per_worker,
                "run_launcher_as_worker": bool(spec.run_launcher_as_worker),
                "run_policy": run_policy,
                "mpi_replica_specs": specs,
                "ssh_auth_mount_path": spec.ssh_auth_mount_path or ROOT_SSH_PATH,
                "launcher_creation_policy": spec.launcher_creation_policy or "AtStartup",
                "mpi_implementation": spec.mpi_implementation or "OpenMPI",
            }
        )
        metadata = job.metadata.model_copy(update={"namespace": job.metadata.ns})
        return job.model_copy(update={"metadata": metadata, "spec": defaulted})

    def validate(self, job: MPIJob) -> list[Finding]:
        findings = _name_findings(job)
        specs = job.spec.mpi_replica_specs
        base = "spec.mpiReplicaSpecs"
        if "Launcher" not in specs:
            findings.append(LAUNCHER_MISSING.at(f"{base}.Launcher"))
        for rtype, replica in specs.items():
            findings += _replica_findings(rtype, replica, f"{base}.{rtype}")
        findings += _run_policy_findings(job.spec.run_policy)
        return findings

    def pod_templates(self, job: MPIJob) -> Iterable[PodSet]:
        for rtype, replica in job.spec.mpi_replica_specs.items():
            path = f"spec.mpiReplicaSpecs.{rtype}.template"
            yield PodSet(rtype, path, replica.template, job.replicas(rtype))

    def with_templates(self, job: MPIJob, templates: Mapping[str, PodTemplate]) -> MPIJob:
        specs = {
            rtype: replica.model_copy(update={"template": dict(templates[rtype])})
            if rtype in templates
            else replica
            for rtype, replica in job.spec.mpi_replica_specs.items()
        }
        spec = job.spec.model_copy(update={"mpi_replica_specs": specs})
        return job.model_copy(update={"spec": spec})

    def expansion(self, job: MPIJob) -> Expansion:
        return mpi_pods.expand(job)

    def trainer_plan(self, job: MPIJob) -> tuple[TrainerPlan | None, list[Finding]]:
        """The runtime's ``mpi`` policy (slots, SSH path, launcher as node) with two
        replicated jobs, ``launcher`` (the trainer) and ``node`` (the workers), each
        container[0] renamed ``node``; ``WaitForWorkersReady`` becomes the launcher's
        ``dependsOn: node Ready``. Trainer v2.3 implements OpenMPI only."""
        spec = job.spec
        if spec.mpi_implementation != "OpenMPI":
            implementation = spec.mpi_implementation
            return None, [TRAINER_IMPLEMENTATION.at("spec.mpiImplementation", implementation)]
        specs = spec.mpi_replica_specs

        def node(rtype: str, sshd: bool) -> dict[str, Any]:
            template = specs[rtype].template
            first = containers(template.get("spec") or {})[0]
            out = as_node(template, str(first.get("name")))
            main = containers(out["spec"])[0]
            if sshd and not main.get("command") and not main.get("args"):
                main["command"] = ["/usr/sbin/sshd", "-De"]
            policy = specs[rtype].restart_policy
            out["spec"]["restartPolicy"] = "Never" if policy == "ExitCode" else policy
            return out

        waits = spec.launcher_creation_policy == "WaitForWorkersReady"
        launcher = ReplicatedJob(
            "launcher", node("Launcher", False), trainer=True, depends_on=("node",) if waits else ()
        )
        jobs = [launcher]
        if "Worker" in specs and job.replicas("Worker"):
            workers = ReplicatedJob("node", node("Worker", True))
            jobs = [workers, launcher] if waits else [launcher, workers]
        nodes = job.replicas("Worker") + (1 if spec.run_launcher_as_worker else 0)
        policy = {
            "numProcPerNode": spec.slots_per_worker,
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": spec.ssh_auth_mount_path,
            "runLauncherAsNode": bool(spec.run_launcher_as_worker),
        }
        plan = TrainerPlan(
            framework="mpi",
            ml_policy={"numNodes": max(nodes, 1), "mpi": policy},
            jobs=tuple(jobs),
            num_nodes=max(nodes, 1),
        )
        return plan, []

    def gang_facts(self, job: MPIJob, pod_sets: Sequence[PodSet]) -> GangFacts:
        """The MPI Operator's gang (§5.2, pkg/controller/podgroup.go): launcher and
        workers, no task names, ``minMember`` workers + 1, ``schedulerName`` always
        overwritten; with ``WaitForWorkersReady`` the launcher comes only once every
        worker is Ready."""
        waits = job.spec.launcher_creation_policy == "WaitForWorkersReady"
        workers = job.replicas("Worker")
        return GangFacts(
            members=(
                GangMember("Launcher", job.replicas("Launcher")),
                GangMember("Worker", workers),
            ),
            min_member=workers + 1,
            replace_scheduler_name=True,
            default_queue="",
            queue_annotation=True,
            priority_roles=("Launcher", "Worker"),
            default_timeout=0,
            started_late=("Launcher",) if waits else (),
        )

    def success_policy(self, job: MPIJob) -> SuccessPolicy:
        return SuccessPolicy(roles=("Launcher",), summary="the Launcher succeeds")

    def run_rules(self, job: MPIJob) -> RunRules:
        specs = job.spec.mpi_replica_specs
        replicas: list[Replica] = []
        if "Launcher" in specs:
            policy = specs["Launcher"].restart_policy or "OnFailure"
            replicas.append(Replica("Launcher", 0, launcher_name(job.name), policy))
        if "Worker" in specs:
            policy = specs["Worker"].restart_policy or "Never"
            replicas += [
                # Workers serve ssh to the launcher's mpirun; they run no program of their own.
                Replica("Worker", i, worker_name(job.name, i), policy, remote_shell=True)
                for i in range(job.replicas("Worker"))
            ]
        run_policy = job.spec.run_policy or MPIRunPolicy()
        return RunRules(
            replicas=tuple(replicas),
            success=self.success_policy(job),
            backoff_limit=(
                JOB_BACKOFF_LIMIT if run_policy.backoff_limit is None else run_policy.backoff_limit
            ),
            active_deadline_seconds=run_policy.active_deadline_seconds,
        )


def _name_findings(job: MPIJob) -> list[Finding]:
    """The operator's name rule: the last worker's hostname must be a DNS-1035 label."""
    # The operator checks worker N-1 (worker 0 when there are none); the
    # Service <job> and <job>-launcher are never longer, so this covers them.
    last = worker_name(job.name, max(job.replicas("Worker"), 1) - 1)
    suffix = len(last) - len(job.name)
    if len(last) > LABEL_MAX:
        most = LABEL_MAX - suffix
        return [
            HOSTNAME_LENGTH.at("metadata.name", job.name, last=last, length=len(last), most=most)
        ]
    if not DNS1035_LABEL.match(last):
        return [HOSTNAME_LABEL.at("metadata.name", job.name, last=last)]
    return []


def _replica_findings(rtype: str, replica: ReplicaSpec, base: str) -> list[Finding]:
    if rtype not in _REPLICA_TYPES:
        return [REPLICA_TYPE.at(base, rtype, rtype=rtype)]
    findings: list[Finding] = []
    if rtype == "Launcher" and replica.replicas != 1:
        findings.append(LAUNCHER_REPLICAS.at(f"{base}.replicas", replica.replicas))
    if rtype == "Worker" and (replica.replicas or 0) < 1:
        findings.append(WORKER_REPLICAS.at(f"{base}.replicas", replica.replicas))
    if replica.restart_policy not in _RESTART_POLICIES:
        findings.append(RESTART_POLICY.at(f"{base}.restartPolicy", replica.restart_policy))
    findings += _template_findings(replica.template, f"{base}.template")
    return findings


def _template_findings(template: Mapping[str, Any], path: str) -> list[Finding]:
    spec = template.get("spec") or {}
    found = containers(spec)
    if not found:
        return [
            no_containers(
                path, "add the MPI container first: container[0] gets the SSH mount and env"
            )
        ]
    return image_findings(found, path, PINNED_IMAGE_HINT) + template_restart_policy(template, path)


def _run_policy_findings(policy: MPIRunPolicy | None) -> list[Finding]:
    managed_by = policy.managed_by if policy else None
    if managed_by is None or managed_by == OPERATOR_MANAGER:
        return []
    if managed_by == MULTIKUEUE_MANAGER:
        # A MultiKueue job is valid; the pods target refuses it (pods_refusals).
        return []
    return [MANAGED_BY.at("spec.runPolicy.managedBy", managed_by)]


FRAMEWORK = MPI()
