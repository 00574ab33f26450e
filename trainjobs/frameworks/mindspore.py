"""MindSpore, 2020 generation: the MSJob (kubeflow.org/v1) of mindspore-ai/ms-operator.

A list of replica specs, one MASTER and any number of WORKERs, each with its own
``masterPort``. The controller creates one ClusterIP Service and one Pod per replica
and appends, only to containers named ``mindspore``, in this order: MS_CONFIG,
MASTER_PORT, MASTER_ADDR, WORLD_SIZE, RANK. The master has rank 0 and
``MASTER_ADDR=localhost``; worker ``k`` has rank ``k+1`` and reaches the master
through the Service ``<job>-master-<runtimeId>-0``.

Facts: seed-systems.md §2A (ms-operator @ 8bcc840, pkg/trainer/replicas.go,
training.go, pkg/apis/mindspore/v1).

Defaults made explicit on both targets: ``RuntimeId`` — upstream 4 random characters
kept only in the controller's memory (a restarted controller made a second set of
pods), here 4 characters of ``[0-9a-z]`` derived from ``<namespace>/<name>``;
``msImage: mindspore/mindspore:v0.1.0-alpha`` (unused); per replica spec
``replicas: 1``, ``masterPort: 23456``, ``replicaType: MASTER``; ``terminationPolicy``
master ``MASTER``/``0``.

Rules (the controller's validation): a MASTER spec with exactly one replica, types
MASTER or WORKER, each once; every replica a container named ``mindspore`` with an
image; the type named by ``terminationPolicy.master.replicaName`` present.

The seed's ``spec.backend: "tcp"`` and spec-level ``spec.masterPort`` are not part of
this API; upstream dropped them on decode and used 23456. trainjobs accepts them,
applies ``masterPort`` to every replica spec that sets none (warning), and drops
``backend: tcp`` — the TCP master rendezvous is the only one this operator has
(warning; any other value is an error). Neither reaches the operator target's output.

Deviations on the ``pods`` target:

* Pods get stable names ``<job>-<type>-<runtimeId>-<rank>``: upstream appended 5
  random characters.
* Worker Service ``<job>-worker-<runtimeId>-<k>`` (the k-th host of MS_CONFIG) selects
  the worker of rank ``k+1``. Upstream's selector asked for ``task_index: k`` while
  worker pods carry their rank, so the first worker Service selected no pod and the
  last worker had none; now every MS_CONFIG host resolves to a worker.
* No ownerReferences (there is no job object); Pulumi owns the objects.

Like upstream, the template's metadata (labels, annotations) is not copied to the
pods and ``spec.schedulerName`` replaces the template's (both warned about); the
controller config's accelerator volumes are not applied (that is operator
configuration, not part of the job).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

from trainjobs.errors import Finding
from trainjobs.frameworks._mindspore_model import (
    DEFAULT_IMAGE,
    ENV_ORDER,
    NAME_PREFIX,
    MasterSpec,
    MSJob,
    MSJobSpec,
    MSReplicaSpec,
    TerminationPolicy,
)
from trainjobs.frameworks._mindspore_rules import (
    DEFAULT_CONTAINER,
    DEFAULT_MASTER_PORT,
    replica_findings,
    role_of,
    seed_field_findings,
    spec_port,
    template_findings,
)
from trainjobs.frameworks._seed import compact_json, stable_base36
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.capabilities import Addresses, Gang
from trainjobs.k8s.data import Manifest, PodTemplate, deep_copy
from trainjobs.plan import GangFacts, PodSet
from trainjobs.plan.expansion import Expansion, PodPlan, ServicePlan

__all__ = [
    "DEFAULT_CONTAINER",
    "DEFAULT_IMAGE",
    "DEFAULT_MASTER_PORT",
    "ENV_ORDER",
    "FRAMEWORK",
    "MSJob",
    "MSJobSpec",
    "MSReplicaSpec",
    "MasterSpec",
    "MindSpore",
    "TerminationPolicy",
]


def _object_name(name: str, runtime_id: str, role: str, index: int) -> str:
    return f"{name[:NAME_PREFIX]}-{role.lower()}-{runtime_id}-{index}"


@lru_cache(maxsize=64)
def _cluster_json(name: str, runtime_id: str, layout: tuple[tuple[str, int, int], ...]) -> str:
    """The ``cluster`` of MS_CONFIG: each type's Services (types sorted), as JSON."""
    cluster = {
        kind.lower(): [f"{_object_name(name, runtime_id, kind, i)}:{port}" for i in range(replicas)]
        for kind, port, replicas in layout
    }
    return compact_json(dict(sorted(cluster.items())))


class MindSpore(Framework[MSJob], Gang, Addresses):
    """MindSpore 0.x distributed training with a TCP master (ms-operator, 2020)."""

    reports_mounts = True  # its rules call _seed.mount_findings

    name = "mindspore"
    title = "MindSpore (MSJob kubeflow.org/v1, 2020)"
    legacy = True
    operator = "ms-operator 8bcc840, 2020 Helm chart"
    crd_generated = True
    # The 2020 controller keeps status in memory only; nothing to wait for.
    status_conditions: ClassVar[dict[str, str]] = {}
    success_rule = (
        "when the replica named by terminationPolicy.master (default the MASTER) succeeds; "
        "the operator meant that but never reported it, and replaced failed pods"
    )

    # ----- names -------------------------------------------------------------

    def object_name(self, job: MSJob, role: str, index: int) -> str:
        """``<job[:40]>-<type>-<runtimeId>-<index>``: upstream's Service and pod-name prefix."""
        return _object_name(job.name, job.spec.runtime_id or "", role, index)

    @staticmethod
    def rank(role: str, index: int) -> int:
        """Master index 0 is rank 0; worker index k is rank k+1."""
        return index + 1 if role == "WORKER" else index

    # ----- defaults ------------------------------------------------------------

    def default(self, job: MSJob) -> MSJob:
        spec = job.spec
        metadata = job.metadata.model_copy(update={"namespace": job.metadata.ns})
        port = spec_port(spec.master_port) or DEFAULT_MASTER_PORT
        replicas = [
            r.model_copy(
                update={
                    "replicas": 1 if r.replicas is None else r.replicas,
                    "master_port": r.master_port or port,
                    "replica_type": role_of(r),
                    "template": deep_copy(r.template),
                }
            )
            for r in spec.replica_specs
        ]
        policy = spec.termination_policy
        if policy is None:
            policy = TerminationPolicy(master=MasterSpec(replica_name="MASTER", replica_rank=0))
        elif policy.master is not None:
            master = MasterSpec(
                replica_name=policy.master.replica_name or "",
                replica_rank=policy.master.replica_rank or 0,
            )
            policy = TerminationPolicy(master=master)
        update = {
            "runtime_id": spec.runtime_id or stable_base36(f"{metadata.ns}/{metadata.name}"),
            "replica_specs": replicas,
            "ms_image": spec.ms_image or DEFAULT_IMAGE,
            "termination_policy": policy,
        }
        return job.model_copy(update={"metadata": metadata, "spec": spec.model_copy(update=update)})

    def operator_manifest(self, job: MSJob) -> Manifest:
        """The defaulted MSJob without the seed-only ``backend``/``masterPort``, now mapped."""
        manifest = job.to_manifest()
        for key in ("backend", "masterPort"):
            manifest["spec"].pop(key, None)
        return manifest

    # ----- rules ---------------------------------------------------------------

    def validate(self, job: MSJob) -> list[Finding]:
        findings = seed_field_findings(job)
        findings += replica_findings(job)
        for i, replica in enumerate(job.spec.replica_specs):
            findings += template_findings(job, replica, f"spec.replicaSpecs[{i}].template")
        return findings

    # ----- templates -------------------------------------------------------------

    def pod_templates(self, job: MSJob) -> Iterable[PodSet]:
        for i, replica in enumerate(job.spec.replica_specs):
            count = 1 if replica.replicas is None else replica.replicas
            yield PodSet(
                role_of(replica), f"spec.replicaSpecs[{i}].template", replica.template, count
            )

    def with_templates(self, job: MSJob, templates: Mapping[str, PodTemplate]) -> MSJob:
        replicas = [
            r.model_copy(update={"template": dict(templates[role_of(r)])})
            if role_of(r) in templates
            else r
            for r in job.spec.replica_specs
        ]
        spec = job.spec.model_copy(update={"replica_specs": replicas})
        return job.model_copy(update={"spec": spec})

    # ----- expansion -------------------------------------------------------------

    def labels(self, job: MSJob, role: str, task_index: int) -> dict[str, str]:
        """The operator's labels of a pod or Service, in its order."""
        return {
            "kubeflow.org": "",
            "job_type": role,
            "runtime_id": job.spec.runtime_id or "",
            "ms_job_name": job.name,
            "task_index": str(task_index),
        }

    def ms_config(self, job: MSJob, role: str, rank: int) -> str:
        """MS_CONFIG: every Service by type (types sorted), this pod's task, ``cloud``."""
        layout = tuple(
            (role_of(r), r.master_port or DEFAULT_MASTER_PORT, r.replicas or 0)
            for r in job.spec.replica_specs
        )
        cluster = _cluster_json(job.name, job.spec.runtime_id or "", layout)
        # compact_json of {"cluster", "task", "environment"}, the cluster (every pod of
        # the job) built once per job: this runs once per pod.
        task = compact_json({"type": role.lower(), "index": rank})
        return f'{{"cluster":{cluster},"task":{task},"environment":"cloud"}}'

    def cluster_env(self, job: MSJob, replica: MSReplicaSpec, rank: int) -> list[dict[str, Any]]:
        """The five env vars of the pod of ``rank``, in the operator's order."""
        role = role_of(replica)
        world = sum(r.replicas or 0 for r in job.spec.replica_specs)
        master = "localhost" if rank == 0 else self.object_name(job, "MASTER", 0)
        values = (
            self.ms_config(job, role, rank),
            str(replica.master_port or DEFAULT_MASTER_PORT),
            master,
            str(world),
            str(rank),
        )
        return [{"name": n, "value": v} for n, v in zip(ENV_ORDER, values, strict=True)]

    def gang_facts(self, job: MSJob, pod_sets: Sequence[PodSet]) -> GangFacts:
        """The MS operator makes no PodGroup and gives every pod ``spec.schedulerName``
        (over the template's), so trainjobs cannot mark its pods as a gang."""
        return GangFacts(
            (),
            0,
            unsupported="the MS operator sets every pod's scheduler from spec.schedulerName "
            "and creates no PodGroup",
        )

    def expansion(self, job: MSJob) -> Expansion:
        services: list[ServicePlan] = []
        pods: list[PodPlan] = []
        for replica in job.spec.replica_specs:
            role = role_of(replica)
            ports = (("ms-port", replica.master_port or DEFAULT_MASTER_PORT),)
            for index in range(replica.replicas or 0):
                rank = self.rank(role, index)
                services.append(
                    ServicePlan(
                        self.object_name(job, role, index),
                        self.labels(job, role, index),
                        # The pod behind the index-th name is the one of that index's rank.
                        self.labels(job, role, rank),
                        ports,
                        headless=False,
                    )
                )
                pods.append(
                    PodPlan(
                        role=role,
                        name=self.object_name(job, role, rank),
                        labels=self.labels(job, role, rank),
                        env=self.cluster_env(job, replica, rank),
                        env_into=DEFAULT_CONTAINER,
                        # The controller builds the pod's metadata itself and puts the
                        # job's scheduler in place of the template's.
                        template_metadata="drop",
                        scheduler_name=job.spec.scheduler_name or "",
                    )
                )
        return Expansion(services, pods)

    def addresses(self, job: MSJob) -> dict[str, str]:
        for replica in job.spec.replica_specs:
            if role_of(replica) == "MASTER":
                port = replica.master_port or DEFAULT_MASTER_PORT
                return {"master": f"{self.object_name(job, 'MASTER', 0)}:{port}"}
        return {}


FRAMEWORK = MindSpore()
