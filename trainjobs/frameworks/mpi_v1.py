"""MPI v1: the Training Operator's MPIJob ``kubeflow.org/v1`` (kubectl exec, no SSH).

The launcher pod starts remote ranks with ``kubectl exec`` through
``/etc/mpi/kubexec.sh``: OpenMPI's rsh agent (and Intel MPI's bootstrap) is
that script, a ServiceAccount/Role/RoleBinding ``<job>-launcher`` lets the
launcher exec into exactly its workers, and an init container copies
``kubectl`` into ``/opt/kube``. Workers just sleep. No Services.

``pods`` target: the objects the operator would create (§4.7), except:

* ``discover_hosts.sh`` lists every worker; the operator lists only *running*
  ones and rewrites it as they change. A render is static.
* The ``kubectl-delivery`` image is pinned (``k8s.images.KUBECTL_DELIVERY_IMAGE``);
  the operator's default is ``:latest``, which would make renders name a
  moving target. trainjobs' ``TrainingOperator`` install passes the same image
  (``--mpi-kubectl-delivery-image``), so the operator makes the same launcher.
* A ``serviceAccountName`` in the Launcher template must already exist: the
  operator would create it if missing, a render cannot know whether it is.
  Without one, trainjobs renders the ServiceAccount ``<job>-launcher``.
* With no workers the Role grants no ``pods/exec`` at all. The operator
  renders the rule without ``resourceNames``, which would allow exec into
  every pod of the namespace.

Success rule: the launcher pod's phase (Succeeded / Failed).

Facts: kubeflow-operators.md §2, §4.7 (Training Operator v1.9.4,
pkg/controller.v1/mpi, pkg/apis/kubeflow.org/v1/mpi_*.go).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks import mpi_v1_pods
from trainjobs.frameworks._container_rules import (
    PINNED_IMAGE_HINT,
    no_containers,
    template_restart_policy,
)
from trainjobs.frameworks._mpi import (
    LAUNCHER_MISSING,
    LAUNCHER_REPLICAS,
    launcher_name,
    worker_name,
)
from trainjobs.frameworks._mpi_v1_model import MPIJobV1, MPIJobV1Spec
from trainjobs.frameworks.kubeflow_v1 import (
    V1_CONTROLLER_RULES,
    KubeflowV1Framework,
    ReplicaSpec,
    RunPolicy,
)
from trainjobs.k8s.pods import spec_containers as containers
from trainjobs.plan import PodSet, Replica, RunRules, SuccessPolicy
from trainjobs.plan.expansion import Expansion

__all__ = ["FRAMEWORK", "MPIJobV1", "MPIJobV1Spec", "MPIv1"]

_DEFAULT_REPLICAS = {"Launcher": 1, "Worker": 0}

# The controller's rules (ValidateV1MpiJobSpec) and two warnings, declared once.
REPLICA_TYPE = Rule(
    "mpi.replica_type",
    "MPIJob has no replica type {rtype!r}",
    hint="use Launcher or Worker, spelled exactly so (this API does not fold case)",
)
CONTAINER_FIELDS = (
    ("image", Rule("template.image", "every container needs an image", hint=PINNED_IMAGE_HINT)),
    ("name", Rule("template.name", "every container needs a name", hint="set name")),
)
"""What every container must have, each with the rule that says so."""
CLEAN_POD_POLICY = Rule(
    "mpi.clean_pod_policy",
    "the deprecated spec.cleanPodPolicy differs from runPolicy.cleanPodPolicy; the operator "
    "applies runPolicy's ({nested})",
    hint="remove spec.cleanPodPolicy and keep runPolicy.cleanPodPolicy",
    severity=Severity.WARNING,
)
MAIN_CONTAINER = Rule(
    "mpi.main_container",
    "no Worker container has this name, so kubectl exec --container fails",
    hint="use one of {names} or remove mainContainer",
    severity=Severity.WARNING,
)


class MPIv1(KubeflowV1Framework[MPIJobV1]):
    """MPI programs launched with kubectl exec (the Training Operator's MPIJob)."""

    name = "mpi-v1"
    title = "MPI v1 (MPIJob v1, kubectl exec)"
    # MPIJob v1 has no webhook: Training Operator pkg/controller.v1/mpi/
    # mpijob_controller.go Reconcile calls ValidateV1MpiJobSpec (pkg/apis/kubeflow.org/v1/
    # mpi_validation.go: replica types, containers with image and name, one Launcher)
    # and fails the job.
    webhook_rules = frozenset()
    controller_rules = V1_CONTROLLER_RULES | {
        "mpi.launcher_missing",
        "mpi.launcher_replicas",
        "mpi.replica_type",
        "template.containers",
        "template.image",
        "template.name",
    }
    replica_types = ("Launcher", "Worker")
    # Constants of the API; unlike the other v1 kinds nothing is built from them.
    default_container = "mpi"
    default_port_name = "mpi-port"
    default_port = 9999
    default_restart_policy = "Never"
    success_rule = "when the launcher pod succeeds"

    def is_master(self, job: MPIJobV1, rtype: str, index: int) -> bool:
        return rtype == "Launcher"

    def default(self, job: MPIJobV1) -> MPIJobV1:
        # Not the engine's defaults: no replica-key case folding and no default port.
        spec = job.spec
        specs: dict[str, ReplicaSpec] = {}
        for rtype, replica in spec.mpi_replica_specs.items():
            if rtype in _DEFAULT_REPLICAS:
                replicas = replica.replicas
                replica = replica.model_copy(
                    update={
                        "replicas": _DEFAULT_REPLICAS[rtype] if replicas is None else replicas,
                        "restart_policy": replica.restart_policy or self.default_restart_policy,
                    }
                )
            specs[rtype] = replica
        run_policy = spec.run_policy or RunPolicy()
        top, nested = spec.clean_pod_policy, run_policy.clean_pod_policy
        # Neither set: both None. One set: both take it. Both set and different:
        # left as written (validate warns); the operator then applies runPolicy's.
        if top is None or nested is None:
            policy = nested or top or "None"
            top = policy
            run_policy = run_policy.model_copy(update={"clean_pod_policy": policy})
        defaulted = spec.model_copy(
            update={"mpi_replica_specs": specs, "clean_pod_policy": top, "run_policy": run_policy}
        )
        metadata = job.metadata.model_copy(update={"namespace": job.metadata.ns})
        return job.model_copy(update={"metadata": metadata, "spec": defaulted})

    def validate(self, job: MPIJobV1) -> list[Finding]:
        """The operator's ``ValidateV1MpiJobSpec``, plus warnings for run-time surprises."""
        findings: list[Finding] = []
        base = "spec.mpiReplicaSpecs"
        specs = job.spec.mpi_replica_specs
        for rtype, replica in specs.items():
            findings += self._replica_findings(rtype, replica, f"{base}.{rtype}")
        if "Launcher" not in specs:
            findings.append(LAUNCHER_MISSING.at(f"{base}.Launcher"))
        findings += _spec_warnings(job)
        return findings

    def _replica_findings(self, rtype: str, replica: ReplicaSpec, base: str) -> list[Finding]:
        if rtype not in self.replica_types:
            return [REPLICA_TYPE.at(base, rtype, rtype=rtype)]
        findings: list[Finding] = []
        template_spec = replica.template.get("spec") or {}
        found = containers(template_spec)
        if not found:
            findings.append(
                no_containers(
                    f"{base}.template",
                    "add the MPI container first: the operator uses container[0]",
                )
            )
        for i, container in enumerate(found):
            for field, rule in CONTAINER_FIELDS:
                if not container.get(field):
                    findings.append(rule.at(f"{base}.template.spec.containers[{i}].{field}"))
        if rtype == "Launcher" and replica.replicas != 1:
            findings.append(LAUNCHER_REPLICAS.at(f"{base}.replicas", replica.replicas))
        return findings + template_restart_policy(replica.template, f"{base}.template")

    def pod_templates(self, job: MPIJobV1) -> Iterable[PodSet]:
        for ref in super().pod_templates(job):
            replicas = job.spec.mpi_replica_specs[ref.role].replicas
            if replicas is None:
                yield replace(ref, replicas=_DEFAULT_REPLICAS.get(ref.role, 1))
            else:
                yield ref

    def expansion(self, job: MPIJobV1) -> Expansion:
        return mpi_v1_pods.expand(job, self.labels)

    def success_policy(self, job: MPIJobV1) -> SuccessPolicy:
        return SuccessPolicy(roles=("Launcher",), summary="the Launcher succeeds")

    def run_rules(self, job: MPIJobV1) -> RunRules:
        # Not the engine's: the launcher is a bare Pod named without an index, and the
        # workers only serve `kubectl exec` from it (their command defaults to sleep).
        replicas: list[Replica] = []
        for rtype in ("Launcher", "Worker"):
            spec = job.spec.mpi_replica_specs.get(rtype)
            if spec is None:
                continue
            policy = spec.restart_policy or self.default_restart_policy
            count = _DEFAULT_REPLICAS[rtype] if spec.replicas is None else spec.replicas
            replicas += [
                Replica(
                    rtype,
                    i,
                    launcher_name(job.name) if rtype == "Launcher" else worker_name(job.name, i),
                    policy,
                    remote_shell=rtype == "Worker",
                )
                for i in range(count)
            ]
        return self.run_rules_of(job, tuple(replicas))


def _spec_warnings(job: MPIJobV1) -> list[Finding]:
    findings: list[Finding] = []
    spec = job.spec
    nested = spec.run_policy.clean_pod_policy if spec.run_policy else None
    if spec.clean_pod_policy is not None and nested is not None and spec.clean_pod_policy != nested:
        findings.append(
            CLEAN_POD_POLICY.at("spec.cleanPodPolicy", spec.clean_pod_policy, nested=nested)
        )
    main = spec.main_container
    worker = spec.mpi_replica_specs.get("Worker")
    if main and worker is not None:
        names = [c.get("name") for c in containers(worker.template.get("spec") or {})]
        if main not in names:
            findings.append(MAIN_CONTAINER.at("spec.mainContainer", main, names=names))
    return findings


FRAMEWORK = MPIv1()
