"""GpuQueue: a GPU quota on one node pool, enforced by Kueue.

A queue is a Kueue ClusterQueue (the quota: GPUs, CPU and memory of the pool's
flavor), a LocalQueue of the same name in each namespace allowed to use it, and the
ResourceFlavor of the pool (its node labels and taints; one per pool, rendered by the
first queue on that pool, so queues in a cohort share it and can borrow). Jobs name
it in ``trainjobs.queue`` and get Kueue's labels on the object that owns their pods on
the target (``JobPlan.pod_owner``), which is what Kueue admits:

* the custom resource (operator target), or the TrainJob the trainer target makes of
  it: ``kueue.x-k8s.io/queue-name``;
* Pods (a Kubeflow v1 kind on the pods target, an MPIJob's launcher Job included): the
  queue label and the pod-group label on every pod template, the group's total-count
  annotation (Kueue's pod integration admits the pods as one group, all or nothing; it
  manages a Job's pods itself when the Job carries no queue label);
* one batch Job owning every pod (a TrainJob of one replicated job on the pods target):
  the queue label on the Job, created suspended; Kueue's batch/Job integration resumes
  it once admitted;
* the JobSet (a TrainJob on the jobset target): the same labels on the JobSet (Kueue's
  jobset integration; Trainer v2.3 would not copy a TrainJob's labels to it).

Keys: kubernetes-sigs/kueue v0.19.2, ``pkg/controller/constants/constants.go`` and
``pkg/controller/jobs/pod/constants/constants.go``; integrations
``pkg/controller/jobs/{job,jobset,pod}``; objects follow the vendored CRDs in
``crds/kueue-v0.19.2/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding, Rule
from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.k8s.model import K8sModel
from trainjobs.k8s.quantity import QuantityError, format_quantity, parse_quantity
from trainjobs.plan import JobPlan
from trainjobs.plan.admission import POD_GROUP_COUNT, POD_GROUP_LABEL, QUEUE_LABEL
from trainjobs.platform.base import PlanEffect, PlatformKind, PlatformResource, Reference
from trainjobs.platform.pools.placement import job_path, node_selector
from trainjobs.platform.pools.resources import GPU, PodDemand, pod_demand
from trainjobs.platform.pools.schedulability import bytes_text
from trainjobs.platform.pools.spec import GpuNodePool
from trainjobs.platform.workload import component_labels

__all__ = [
    "KIND",
    "KUEUE_API",
    "QUEUE_LABEL",
    "GpuQueue",
    "GpuQueueKind",
    "GpuQueueSpec",
    "job_demand",
]

KUEUE_API = "kueue.x-k8s.io/v1beta2"
EPHEMERAL = "ephemeral-storage"

# Custom resources Kueue admits through its own integrations (kueue v0.19.2,
# pkg/controller/jobs/{kubeflow/jobs/*,mpijob,trainjob}); other kinds must use the
# pods target, where Kueue admits the pods as a group.
KUEUE_KINDS = {
    ("kubeflow.org/v1", "TFJob"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("kubeflow.org/v1", "XGBoostJob"),
    ("kubeflow.org/v1", "PaddleJob"),
    ("kubeflow.org/v1", "JAXJob"),
    ("kubeflow.org/v2beta1", "MPIJob"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
}

QUANTITY = Rule(
    "queue.quantity", "{field} must be a Kubernetes quantity", hint="e.g. cpu: 384, memory: 4Ti"
)
NAMESPACE = Rule(
    "queue.namespace",
    "queue {queue!r} has LocalQueues in {namespaces}, but the job runs in {namespace!r}",
    hint="add {namespace!r} to spec.namespaces of queue {queue!r}",
)
UNQUEUED_KIND = Rule(
    "queue.kind",
    "Kueue has no integration for {kind} ({api_version}) objects, so the queue would never "
    "hold the job back",
    hint="render the job with target pods (Kueue admits its pods as a group) "
    "at {job}.trainjobs.target",
)
UNQUEUEABLE = Rule(
    "queue.kind",
    "no target can put a {kind} through a queue: Kueue has no integration for it, and "
    "its pods come from objects its operator makes, not from pod templates trainjobs "
    "can label",
    hint="remove {job}.trainjobs.queue",
)


class Preemption(K8sModel):
    """``spec.preemption`` of a GpuQueue: whom a pending job may evict (Kueue's
    ClusterQueue ``preemption``); each field defaults to Kueue's ``Never``."""

    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] | None = (
        Field(
            default=None,
            description="Evict lower-priority (or also newer equal-priority) jobs of the same "
            "queue; default Never.",
        )
    )
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] | None = Field(
        default=None,
        description="Evict jobs of other queues of the cohort that borrowed this queue's "
        "quota: Any, only LowerPriority ones, or Never (default).",
    )


def _toleration(taint: dict[str, Any]) -> dict[str, Any]:
    """The toleration of ``taint`` (its key, value and effect)."""
    if taint.get("value") is None:
        return {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
    return {
        "key": taint["key"],
        "operator": "Equal",
        "value": taint["value"],
        "effect": taint["effect"],
    }


class GpuQueueSpec(K8sModel):
    """``spec`` of a GpuQueue."""

    node_pool: str = Field(description="The GpuNodePool whose capacity the queue shares. Required.")
    gpus: int | None = Field(
        default=None,
        ge=0,
        description="Nominal GPU quota; default the pool's maxNodes x gpusPerNode.",
    )
    cpu: int | str | None = Field(
        default=None, description="Nominal CPU quota; default the pool's maxNodes x cpu."
    )
    memory: int | str | None = Field(
        default=None, description="Nominal memory quota; default the pool's maxNodes x memory."
    )
    ephemeral_storage: int | str | None = Field(
        default=None,
        description="Nominal ephemeral-storage quota; default none: the queue covers no "
        "ephemeral storage, and Kueue admits no job whose pods request any (the MPIJob v1 "
        "launcher's kubectl-delivery init container requests 5Gi).",
    )
    namespaces: list[str] = Field(
        default_factory=lambda: ["default"],
        min_length=1,
        description="Namespaces that get a LocalQueue and may submit to it; default [default].",
    )
    cohort: str | None = Field(
        default=None, description="Kueue cohort to borrow unused quota from; default none."
    )
    preemption: Preemption | None = Field(
        default=None,
        description="Whom a pending job of the queue may evict; default none (Kueue: Never).",
    )
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = Field(
        default="BestEffortFIFO",
        description="BestEffortFIFO (a job that does not fit lets smaller ones by) or StrictFIFO.",
    )


class GpuQueue(PlatformResource):
    """A GpuQueue document."""

    kind: Literal["GpuQueue"] = "GpuQueue"
    spec: GpuQueueSpec


def _quantity(value: int | str | None) -> Fraction | None:
    if value is None:
        return None
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def job_demand(plan: JobPlan) -> PodDemand:
    """What all pods of a job request together: what Kueue admits at once."""
    total = PodDemand()
    for ref in plan.pod_sets:
        total = total + pod_demand(ref.template).times(ref.replicas)
    return total


class GpuQueueKind(PlatformKind[GpuQueue]):
    """Renders a GpuQueue's Kueue objects and labels the jobs that name it."""

    category = "queue"
    title = "GPU quota on a node pool (Kueue ClusterQueue, LocalQueues, ResourceFlavor)"
    default_namespace = None

    def validate(self, resource: PlatformResource) -> list[Finding]:
        spec = self.document(resource).spec
        return [
            QUANTITY.at(f"spec.{field}", value, field=field)
            for field, value in (
                ("cpu", spec.cpu),
                ("memory", spec.memory),
                ("ephemeralStorage", spec.ephemeral_storage),
            )
            if value is not None and _quantity(value) is None
        ]

    def references(self, resource: PlatformResource) -> list[Reference]:
        return [Reference("nodePool", self.document(resource).spec.node_pool, "spec.nodePool")]

    def pool_of(
        self, resource: PlatformResource, platform: Sequence[PlatformResource]
    ) -> GpuNodePool | None:
        """The queue's pool among ``platform``, or None (the reference check reports it)."""
        name = self.document(resource).spec.node_pool
        return next((p for p in platform if isinstance(p, GpuNodePool) and p.name == name), None)

    def quota(self, resource: PlatformResource, pool: GpuNodePool | None) -> PodDemand:
        """The nominal quota: GPUs, CPU and memory, each defaulting to the pool's total."""
        spec = self.document(resource).spec
        gpus = Fraction(spec.gpus) if spec.gpus is not None else None
        cpu, memory = _quantity(spec.cpu), _quantity(spec.memory)
        if pool is not None:
            nodes = pool.spec.max_nodes
            gpus = gpus if gpus is not None else Fraction(nodes * pool.spec.gpus_per_node)
            cpu = cpu if cpu is not None else pool.spec.cpu_value * nodes
            memory = memory if memory is not None else pool.spec.memory_value * nodes
        return PodDemand(gpus or Fraction(0), cpu or Fraction(0), memory or Fraction(0))

    def ephemeral_quota(self, resource: PlatformResource) -> Fraction | None:
        """The ephemeral-storage quota in bytes; None: the queue does not cover it."""
        return _quantity(self.document(resource).spec.ephemeral_storage)

    def covered(self, resource: PlatformResource) -> tuple[str, ...]:
        """The resources the ClusterQueue has quota for: Kueue admits no pod that requests
        any other."""
        extra = (EPHEMERAL,) if self.ephemeral_quota(resource) is not None else ()
        return ("cpu", "memory", GPU, *extra)

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        return self.manifests_in(resource, [resource])

    def manifests_in(
        self, resource: PlatformResource, platform: Sequence[PlatformResource]
    ) -> list[Manifest]:
        queue = self.document(resource)
        spec = queue.spec
        pool = self.pool_of(resource, platform)
        labels = component_labels("kueue", queue, "gpu-queue")
        quota = self.quota(resource, pool)
        objects: list[Manifest] = []
        first = next(
            (q for q in platform if isinstance(q, GpuQueue) and q.spec.node_pool == spec.node_pool),
            queue,
        )
        if pool is not None and first is queue:
            flavor: dict[str, Any] = {"nodeLabels": node_selector(pool)}
            if pool.spec.taints:
                flavor["nodeTaints"] = [t.to_manifest() for t in pool.spec.taints]
                # Kueue admits a workload to a flavor only if it tolerates the flavor's
                # nodeTaints, counting the flavor's own tolerations, which it adds to the
                # pods it admits: a job sent to the queue is meant for the pool.
                flavor["tolerations"] = [_toleration(t.to_manifest()) for t in pool.spec.taints]
            objects.append(
                {
                    "apiVersion": KUEUE_API,
                    "kind": "ResourceFlavor",
                    "metadata": {"name": pool.name, "labels": labels},
                    "spec": flavor,
                }
            )
        quotas: list[dict[str, Any]] = [
            {"name": "cpu", "nominalQuota": format_quantity(quota.cpu)},
            {"name": "memory", "nominalQuota": bytes_text(quota.memory)},
            {"name": GPU, "nominalQuota": int(quota.gpus)},
        ]
        ephemeral = self.ephemeral_quota(resource)
        if ephemeral is not None:
            quotas.append({"name": EPHEMERAL, "nominalQuota": bytes_text(ephemeral)})
        cluster_queue: dict[str, Any] = {
            "namespaceSelector": {
                "matchExpressions": [
                    {
                        "key": "kubernetes.io/metadata.name",
                        "operator": "In",
                        "values": list(spec.namespaces),
                    }
                ]
            },
            "queueingStrategy": spec.queueing_strategy,
            "resourceGroups": [
                {
                    "coveredResources": list(self.covered(resource)),
                    "flavors": [{"name": spec.node_pool, "resources": quotas}],
                }
            ],
        }
        if spec.cohort:
            cluster_queue["cohortName"] = spec.cohort
        if spec.preemption is not None:
            cluster_queue["preemption"] = spec.preemption.to_manifest()
        objects.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "ClusterQueue",
                "metadata": {"name": queue.name, "labels": labels},
                "spec": cluster_queue,
            }
        )
        for namespace in spec.namespaces:
            objects.append(
                {
                    "apiVersion": KUEUE_API,
                    "kind": "LocalQueue",
                    "metadata": {"name": queue.name, "namespace": namespace, "labels": labels},
                    "spec": {"clusterQueue": queue.name},
                }
            )
        return objects

    def outputs(self, resource: PlatformResource) -> dict[str, str]:
        return {"localQueue": resource.name}

    def apply_to_plan(
        self, resource: PlatformResource, plan: JobPlan, ref: Reference
    ) -> PlanEffect:
        """Label what owns the job's pods on its target for Kueue: the job itself, its
        pods (one pod group), or the batch Jobs or JobSet its framework makes."""
        queue = self.document(resource)
        problems = self._job_problems(queue, plan, ref)
        if problems:
            return PlanEffect(plan, problems)
        owner = plan.pod_owner(ref.target)
        if owner == "jobset":
            # The JobSet's suspend stays the job's own: Kueue suspends it on admission.
            return PlanEffect(plan.with_admission({QUEUE_LABEL: queue.name}))
        if owner in ("pods", "jobs"):
            return PlanEffect(self._queued_pods(queue, plan, ref.target))
        return PlanEffect(plan.with_labels({QUEUE_LABEL: queue.name}))

    def _queued_pods(self, queue: GpuQueue, plan: JobPlan, target: str) -> JobPlan:
        """On the pods target. When one batch Job owns every pod (a TrainJob of one
        replicated job), that Job is labelled and created suspended: Kueue's batch/Job
        integration admits it. Otherwise the pods belong to several owners (an MPIJob's
        launcher Job beside its bare worker Pods) and Kueue would make a workload of each
        and admit them apart, so a launcher could run with no workers: instead every pod
        template, the Jobs' too, gets the queue and pod-group labels and the group's
        total count, and the Jobs stay unlabelled and unsuspended — Kueue's pod
        integration then manages their pods as members of the one group (it defers to
        an owning Job only when that Job carries a queue), all or nothing."""
        owned = {s.role for s in plan.pod_sets if plan.pod_owner(target, s.role) == "jobs"}
        if owned and len(plan.pod_sets) == 1:
            return plan.with_admission({QUEUE_LABEL: queue.name}, suspend=True)
        total = sum(s.replicas for s in plan.pod_sets)
        placed = {}
        for pod_set in plan.pod_sets:
            template = {"metadata": {}, **deep_copy(pod_set.template)}
            meta = template["metadata"]
            meta["labels"] = {
                **(meta.get("labels") or {}),
                QUEUE_LABEL: queue.name,
                POD_GROUP_LABEL: plan.name,
            }
            meta["annotations"] = {**(meta.get("annotations") or {}), POD_GROUP_COUNT: str(total)}
            placed[pod_set.role] = template
        return plan.with_templates(placed)

    def _job_problems(self, queue: GpuQueue, plan: JobPlan, ref: Reference) -> list[Finding]:
        spec = queue.spec
        if plan.namespace not in spec.namespaces and not ref.undecided(
            plan.namespace, *spec.namespaces
        ):
            return [
                NAMESPACE.at(
                    ref.path,
                    ref.name,
                    queue=queue.name,
                    namespaces=", ".join(spec.namespaces),
                    namespace=plan.namespace,
                )
            ]
        facts = {
            "kind": plan.kind.kind,
            "api_version": plan.kind.api_version,
            "job": job_path(ref),
        }
        owner = plan.pod_owner(ref.target)
        integrated = (plan.kind.api_version, plan.kind.kind) in KUEUE_KINDS
        # No pod templates (PaddlePaddle EDL's ReplicaSets and trainer Job): the pods
        # target has nothing to label either.
        if not plan.pod_sets and (owner == "pods" or (owner == "resource" and not integrated)):
            return [UNQUEUEABLE.at(ref.path, ref.name, **facts)]
        if owner == "resource" and not integrated:
            return [UNQUEUED_KIND.at(ref.path, ref.name, **facts)]
        return []


KIND = GpuQueueKind()
