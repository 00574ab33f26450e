"""What an operator creates for a job, as data: the ``pods`` target builds the objects.

A framework states which pods and Services its operator makes for a (planned) job,
and what the operator writes into each pod beyond the user's template (identity
labels, rendezvous env, init containers, the restart policy). The ``pods`` target
turns that into Pod and Service objects from the plan's pod templates, so the shape
of a Pod is written once, in ``targets/pods.py``.

Objects an operator makes that are not one Pod per replica (a launcher batch Job,
ReplicaSets, the ssh Secret, RBAC) are plans too (``plan.objects``), in
:attr:`Expansion.first` and :attr:`Expansion.objects`: a framework hands the target
no finished object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from trainjobs.plan.admission import POD_GROUP_COUNT, POD_GROUP_LABEL, PRIORITY_LABEL, QUEUE_LABEL
from trainjobs.plan.gang import GROUP_NAME_ANNOTATION, TASK_SPEC_ANNOTATION
from trainjobs.plan.gang import POD_GROUP_LABEL as SCHEDULER_PLUGINS_POD_GROUP
from trainjobs.plan.jobset import JobSetPlan
from trainjobs.plan.objects import ObjectPlan

__all__ = [
    "CAPABILITY_POD_ANNOTATIONS",
    "CAPABILITY_POD_LABELS",
    "Expansion",
    "PodPlan",
    "ServicePlan",
]

CAPABILITY_POD_LABELS: Final = frozenset(
    {QUEUE_LABEL, PRIORITY_LABEL, POD_GROUP_LABEL, SCHEDULER_PLUGINS_POD_GROUP}
)
"""Pod labels trainjobs' capabilities write into pod templates: Kueue's queue, priority
and pod group, a scheduler-plugins PodGroup's membership. On the ``pods`` target they
reach the pod even where the operator made its pods' metadata itself (``drop``): there
trainjobs makes the pods, and a queue or gang that never sees them would hold nothing."""
CAPABILITY_POD_ANNOTATIONS: Final = frozenset(
    {POD_GROUP_COUNT, GROUP_NAME_ANNOTATION, TASK_SPEC_ANNOTATION}
)
"""Pod annotations trainjobs' capabilities write (Kueue's pod group size, Volcano's
group and task): as :data:`CAPABILITY_POD_LABELS`."""


@dataclass(frozen=True)
class ServicePlan:
    """A Service the operator creates for a job.

    Attributes:
        name: the Service's name (and the DNS name its pods are reached by).
        labels: its labels.
        selector: the pods it selects.
        ports: ``(name, port)`` pairs; an empty name leaves the port unnamed; None: the
            Service lists no ports at all (a headless Service only for DNS).
        headless: True (default) for ``clusterIP: None``: the name resolves to the pod.
        publish_not_ready_addresses: True when the name resolves before the pods are
            Ready; default False.
    """

    name: str
    labels: Mapping[str, str]
    selector: Mapping[str, str]
    ports: tuple[tuple[str, int], ...] | None
    headless: bool = True
    publish_not_ready_addresses: bool = False


@dataclass(frozen=True)
class PodPlan:
    """One Pod the operator creates from the pod template of role ``role``.

    Attributes:
        role: the pod set whose template the pod is made from.
        name: the pod's name.
        labels: the operator's labels; they win over the template's of the same key.
        env: env entries appended to the receiving containers (fresh for this pod).
        env_into: the container that receives ``env``, by name or index; None (default):
            every container.
        init_containers: init containers appended after the user's.
        restart_policy: the pod's ``restartPolicy``; None (default): the template's.
        template_metadata: ``merge`` (default): the template's labels (the operator's
            win), annotations and, with ``copy_finalizers``, finalizers travel to the pod;
            ``drop``: the pod carries the operator's labels, and of the template's
            metadata only what trainjobs' capabilities put there
            (:data:`CAPABILITY_POD_LABELS`, :data:`CAPABILITY_POD_ANNOTATIONS`).
        copy_finalizers: whether the template's finalizers travel; default True.
        scheduler_name: ``keep`` (default) the template's ``schedulerName``, or the name
            the operator sets in its place; the empty string removes it.
        hostname: the pod's ``hostname``; None (default): unset.
        subdomain: the pod's ``subdomain`` (its headless Service); None: unset.
        host_network_dns: True when a host-network pod gets ``dnsPolicy:
            ClusterFirstWithHostNet`` so it still resolves the other pods; default False.
        dns_searches: DNS search domains appended to ``dnsConfig.searches``.
        main_command: the command the first container gets when it sets no command (and,
            with ``main_command_if`` ``neither``, no args either); empty (default): none.
        main_args: the args that go with ``main_command``; empty (default): none.
        main_command_if: ``neither`` (default): only when the container sets neither
            command nor args; ``no_command``: whenever it sets no command.
        service_account: the pod's ``serviceAccountName`` when the template sets none;
            None (default): unset.
        main_mounts: volume mounts appended to the first container.
        volumes: volumes appended to the pod.
    """

    role: str
    name: str
    labels: Mapping[str, str]
    env: Sequence[Mapping[str, Any]] = ()
    env_into: str | int | None = None
    init_containers: Sequence[Mapping[str, Any]] = ()
    restart_policy: str | None = None
    template_metadata: Literal["merge", "drop"] = "merge"
    copy_finalizers: bool = True
    scheduler_name: str = "keep"
    hostname: str | None = None
    subdomain: str | None = None
    host_network_dns: bool = False
    dns_searches: tuple[str, ...] = ()
    main_command: tuple[str, ...] = ()
    main_args: tuple[str, ...] = ()
    main_command_if: Literal["neither", "no_command"] = "neither"
    service_account: str | None = None
    main_mounts: Sequence[Mapping[str, Any]] = ()
    volumes: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True)
class Expansion:
    """Everything the operator creates for one job, in the order it creates them.

    Attributes:
        services: the Services, before the pods that look their names up.
        first: the objects the operator creates before the pods (the ConfigMaps and
            Secrets the pods mount, a launcher's ServiceAccount and RBAC).
        pods: the Pods made from the plan's pod templates.
        objects: further objects, created after the pods (a launcher batch Job,
            ReplicaSets …).
        jobset: the JobSet the operator makes (a TrainJob's), with what it makes beside
            it: the ``pods`` target writes those after ``objects`` and expands the JobSet
            as the JobSet controller would (``targets.jobset_pods``); None (default): none.
    """

    services: Sequence[ServicePlan] = ()
    pods: Sequence[PodPlan] = ()
    objects: Sequence[ObjectPlan] = field(default_factory=tuple)
    first: Sequence[ObjectPlan] = field(default_factory=tuple)
    jobset: JobSetPlan | None = None
