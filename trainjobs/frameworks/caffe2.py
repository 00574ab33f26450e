"""Caffe2: the Caffe2Job (kubeflow.org/v1alpha1) of the archived kubeflow/caffe2-operator.

One replica spec of identical workers. The controller creates only Pods, one per
index, with five labels and seven env vars appended to every container, in this
order: REDIS_HOST, REDIS_PORT, NFS_PATH, SHARD_ID, NUM_SHARDS, RUN_ID,
CAFFE2_CONFIG. Workers rendezvous through the job's backend — a Redis service
(``backendSpecs.backendType: redis``) or a shared file system (``nfs``).

Facts: seed-systems.md §1 (caffe2-operator @ 3773f5b, pkg/apis/caffe2/v1alpha1,
pkg/controller).

Defaults (the controller's, made explicit on both targets): ``RuntimeID`` — upstream
the Unix time when the controller first saw the job, here 10 digits derived from
``<namespace>/<name>``, so every render and every operator restart agree;
``replicas: 1``; ``template.spec.restartPolicy: Never``; ``backendSpecs`` ``none`` for
one replica and ``redis`` otherwise, every field written out as the controller writes
it back (``""`` and ``0`` when unset); ``terminationPolicy.chief`` ``WORKER``/``0``.

Rules (upstream wrote them in ``ValidateCaffe2JobSpec`` but never called it; trainjobs
enforces them): more than one replica needs a ``redis`` or ``nfs`` backend, ``nfs``
needs ``nfsPath``, ``redis`` needs ``redisHost``; every container needs an image.

Deviations on the ``pods`` target, all so that the job works:

* Pods get stable names ``<job>-worker-<i>`` instead of ``generateName: <job>-``.
* ``CAFFE2_CONFIG`` names hosts ``<namespace>-<job>-worker-<k>:2222`` that upstream never
  created; trainjobs adds a headless Service of each name selecting worker ``k``, so
  every host resolves (nothing listens on 2222 unless the training code does).
* A ``hostNetwork`` pod with no ``dnsPolicy`` gets ``dnsPolicy: ClusterFirstWithHostNet``
  (on both targets): with the default ``ClusterFirst`` a host-network pod uses the
  node's resolver and cannot resolve ``redis-service`` or the Services above. An
  explicit ``dnsPolicy: ClusterFirst`` is kept and warned about.
* Names and the ``caffe2_job_key`` label longer than 63 characters (which upstream
  could not create) are shortened to a prefix and a hash.
* No ownerReferences (there is no job object); Pulumi owns the objects.

``RuntimeID`` is the same for every run of a job of the same name: to run a job
again against a Redis that still holds the previous run's keys, set ``RuntimeID``
to a new value (or restart the backend).

A backend named in the job's options (``trainjobs: {backend: redis}``) fills
``backendSpecs`` — ``redis`` with the backend's host and port, or ``nfs`` with its mount
path — so the controller's own REDIS_HOST/REDIS_PORT/NFS_PATH carry it; a Redis
password arrives as ``REDIS_PASSWORD`` (secretKeyRef) and an NFS share is mounted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from trainjobs.errors import Finding
from trainjobs.frameworks._caffe2_model import (
    Caffe2BackendSpec,
    Caffe2Job,
    Caffe2JobSpec,
    Caffe2ReplicaSpec,
    ChiefSpec,
    TerminationPolicy,
)
from trainjobs.frameworks._caffe2_rules import TEMPLATE_PATH, backend_findings, template_findings
from trainjobs.frameworks._seed import compact_json, stable_digits
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.capabilities import Addresses, SuccessRule
from trainjobs.k8s.data import PodTemplate, deep_copy
from trainjobs.k8s.names import shorten
from trainjobs.plan import (
    BackendBinding,
    JobPlan,
    PodSet,
    Replica,
    ReplicaRestartPolicy,
    RunRules,
    SuccessPolicy,
)
from trainjobs.plan.expansion import Expansion, PodPlan, ServicePlan

__all__ = [
    "CAFFE2_PORT",
    "ENV_ORDER",
    "FRAMEWORK",
    "Caffe2",
    "Caffe2BackendSpec",
    "Caffe2Job",
    "Caffe2JobSpec",
    "Caffe2ReplicaSpec",
    "ChiefSpec",
    "TerminationPolicy",
]

CAFFE2_PORT = 2222
"""The port in every CAFFE2_CONFIG host (upstream constant ``Caffe2Port``)."""
ENV_ORDER = (
    "REDIS_HOST",
    "REDIS_PORT",
    "NFS_PATH",
    "SHARD_ID",
    "NUM_SHARDS",
    "RUN_ID",
    "CAFFE2_CONFIG",
)
"""The env the controller appends to every container, in its order."""
ROLE = "Worker"
"""The one replica type; the key node pools and other template rewrites use."""


def _worker_host(job: Caffe2Job, index: int) -> str:
    """``<namespace>-<job>-worker-<k>``: a CAFFE2_CONFIG host, and the Service of that name."""
    return _host(job.namespace, job.name, index)


def _host(namespace: str, name: str, index: int) -> str:
    return shorten(f"{namespace}-{name}-worker-{index}".replace("/", "-"))


@lru_cache(maxsize=64)
def _hosts_json(namespace: str, name: str, replicas: int) -> str:
    """The ``cluster.worker`` list of CAFFE2_CONFIG, which every pod of a job shares."""
    return compact_json([f"{_host(namespace, name, k)}:{CAFFE2_PORT}" for k in range(replicas)])


def _pod_name(job: Caffe2Job, index: int) -> str:
    return shorten(f"{job.name}-worker-{index}")


def _is_set(value: str | int | None) -> bool:
    return value not in (None, "", 0)


class Caffe2(Framework[Caffe2Job], SuccessRule, Addresses):
    """Caffe2 data-parallel training with a Redis or NFS rendezvous."""

    reports_mounts = True  # its rules call _seed.mount_findings
    # The controller's own env carries the address; only the rest (a password) is added.
    carried_backends = {"redis": frozenset(ENV_ORDER), "nfs": frozenset(ENV_ORDER)}

    name = "caffe2"
    title = "Caffe2 (Caffe2Job)"
    legacy = True
    operator = "caffe2-operator 3773f5b, archived"
    crd_generated = True
    success_rule = (
        "when every worker pod succeeds; any failed worker fails the job (a failed pod is "
        "never replaced)"
    )

    # ----- defaults ---------------------------------------------------------

    def default(self, job: Caffe2Job) -> Caffe2Job:
        spec = job.spec
        metadata = job.metadata.model_copy(update={"namespace": job.metadata.ns})
        replicas = 1 if spec.replica_specs.replicas is None else spec.replica_specs.replicas
        template = deep_copy(spec.replica_specs.template)
        pod = template["spec"] = dict(template.get("spec") or {})
        if not pod.get("restartPolicy"):
            pod["restartPolicy"] = "Never"
        if pod.get("hostNetwork") and not pod.get("dnsPolicy"):
            pod["dnsPolicy"] = "ClusterFirstWithHostNet"
        backend = spec.backend_specs or Caffe2BackendSpec(
            backend_type="none" if replicas == 1 else "redis"
        )
        backend = Caffe2BackendSpec(
            backend_type=backend.backend_type or "none",
            nfs_path=backend.nfs_path or "",
            redis_host=backend.redis_host or "",
            redis_port=backend.redis_port or 0,
        )
        policy = spec.termination_policy
        if policy is None:
            policy = TerminationPolicy(chief=ChiefSpec(replica_name="WORKER", replica_index=0))
        elif policy.chief is not None:
            chief = ChiefSpec(
                replica_name=policy.chief.replica_name or "",
                replica_index=policy.chief.replica_index or 0,
            )
            policy = TerminationPolicy(chief=chief)
        runtime_id = spec.runtime_id or stable_digits(f"{metadata.ns}/{metadata.name}")
        new_spec = Caffe2JobSpec(
            runtime_id=runtime_id,
            backend_specs=backend,
            replica_specs=Caffe2ReplicaSpec(replicas=replicas, template=template),
            termination_policy=policy,
        )
        return job.model_copy(update={"metadata": metadata, "spec": new_spec})

    # ----- rules ------------------------------------------------------------

    def validate(self, job: Caffe2Job) -> list[Finding]:
        return backend_findings(job) + template_findings(job.spec.replica_specs.template)

    # ----- templates and backends -------------------------------------------

    def pod_templates(self, job: Caffe2Job) -> Iterable[PodSet]:
        spec = job.spec.replica_specs
        replicas = 1 if spec.replicas is None else spec.replicas
        yield PodSet(ROLE, TEMPLATE_PATH, spec.template, replicas)

    def with_templates(self, job: Caffe2Job, templates: Mapping[str, PodTemplate]) -> Caffe2Job:
        if ROLE not in templates:
            return job
        replica = job.spec.replica_specs.model_copy(update={"template": dict(templates[ROLE])})
        return job.model_copy(
            update={"spec": job.spec.model_copy(update={"replica_specs": replica})}
        )

    def written(self, job: Caffe2Job, plan: JobPlan) -> Caffe2Job:
        """A redis or nfs backend fills ``backendSpecs``; its other env and mounts are in
        the templates already (``JobPlan.with_backend``)."""
        out = super().written(job, plan)
        for binding in plan.backends:
            if binding.type not in self.carried_backends:
                continue
            old = out.spec.backend_specs
            spec = out.spec.model_copy(update={"backend_specs": _backend_spec(binding)})
            bound = out.model_copy(update={"spec": spec})
            if old is not None and (_is_set(old.redis_host) or _is_set(old.nfs_path)):
                bound._replaced_backend = old
            out = bound
        return out

    # ----- expansion ----------------------------------------------------------

    def labels(self, job: Caffe2Job, index: int) -> dict[str, str]:
        """The controller's five pod labels, in its order."""
        return {
            "group_name": "kubeflow.org",
            # A label value holds 63 characters; longer keys are shortened as names are.
            "caffe2_job_key": shorten(f"{job.namespace}-{job.name}"),
            "runtime_id": job.spec.runtime_id or "",
            "caffe2_replica_type": "worker",
            "caffe2_replica_index": str(index),
        }

    def cluster_env(self, job: Caffe2Job, index: int) -> list[dict[str, Any]]:
        """The seven env vars of worker ``index``, in the controller's order."""
        spec = job.spec
        backend = spec.backend_specs or Caffe2BackendSpec()
        replicas = spec.replica_specs.replicas or 0
        # compact_json of {"cluster": {"worker": hosts}, "task": …}, the host list built
        # once per job: this runs once per pod, and the list holds every pod.
        hosts = _hosts_json(job.namespace, job.name, replicas)
        config = (
            f'{{"cluster":{{"worker":{hosts}}},"task":{{"type":"worker","index":{int(index)}}}}}'
        )
        values = (
            backend.redis_host or "",
            str(backend.redis_port or 0),
            backend.nfs_path or "",
            str(index),
            str(replicas),
            spec.runtime_id or "",
            config,
        )
        return [{"name": n, "value": v} for n, v in zip(ENV_ORDER, values, strict=True)]

    def expansion(self, job: Caffe2Job) -> Expansion:
        services: list[ServicePlan] = []
        pods: list[PodPlan] = []
        for index in range(job.spec.replica_specs.replicas or 0):
            labels = self.labels(job, index)
            ports = (("caffe2-port", CAFFE2_PORT),)
            services.append(ServicePlan(_worker_host(job, index), labels, labels, ports))
            pods.append(
                PodPlan(
                    role=ROLE,
                    name=_pod_name(job, index),
                    labels=labels,
                    env=self.cluster_env(job, index),
                    # The controller predates finalizers on templates; it copies none.
                    copy_finalizers=False,
                )
            )
        return Expansion(services, pods)

    def success_policy(self, job: Caffe2Job) -> SuccessPolicy:
        return SuccessPolicy(roles=(ROLE,), summary="every worker succeeds")

    def run_rules(self, job: Caffe2Job) -> RunRules:
        template = job.spec.replica_specs.template
        written = (template.get("spec") or {}).get("restartPolicy")
        policy: ReplicaRestartPolicy = "Never"
        if written in ("Always", "OnFailure"):
            policy = "Always" if written == "Always" else "OnFailure"
        return RunRules(
            replicas=tuple(
                # Nobody replaces a failed pod here; the kubelet still applies its policy.
                Replica(ROLE, i, _pod_name(job, i), policy)
                for i in range(job.spec.replica_specs.replicas or 0)
            ),
            success=self.success_policy(job),
        )

    def addresses(self, job: Caffe2Job) -> dict[str, str]:
        backend = job.spec.backend_specs
        if backend is not None and backend.backend_type == "redis" and backend.redis_host:
            return {"redis": f"{backend.redis_host}:{backend.redis_port or 0}"}
        return {}


def _backend_spec(binding: BackendBinding) -> Caffe2BackendSpec:
    """The ``backendSpecs`` naming a redis or nfs backend."""
    if binding.type == "redis":
        return Caffe2BackendSpec(
            backend_type="redis", nfs_path="", redis_host=binding.host, redis_port=binding.port
        )
    return Caffe2BackendSpec(backend_type="nfs", nfs_path=binding.path, redis_host="", redis_port=0)


FRAMEWORK = Caffe2()
