"""A stack: every job, backend, node pool, queue and operator one Pulumi stack declares."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainjobs.k8s.ownership import ObjectKey
from trainjobs.platform.base import Category
from trainjobs.spec.choices import DEFAULT_K8S_VERSION, DEFAULT_PROFILE, PROFILES, Profile
from trainjobs.spec.entry import JobEntry, PlatformEntry
from trainjobs.targets.names import DEFAULT_TARGET, Target

__all__ = ["DEFAULT_K8S_VERSION", "DEFAULT_PROFILE", "PROFILES", "Profile", "StackSpec"]


@dataclass(frozen=True)
class StackSpec:
    """Everything one stack declares.

    Attributes:
        jobs: the training jobs, in input order.
        platform: backends, node pools, queues and operators, in input order.
        target: the target of jobs that name none; default ``operator``.
        k8s_version: the Kubernetes version to check against; default ``DEFAULT_K8S_VERSION``.
        namespaces: Namespaces the stack creates (rendered first) and so owns:
            ``pulumi destroy`` deletes them and everything in them. Default none, so
            jobs go into namespaces that already exist.
        shared_namespaces: Namespaces the stack uses but never owns
            (``trainjobs:sharedNamespaces``): they must exist before ``pulumi up``, which
            only reads them, and ``pulumi destroy`` leaves them and what is in them.
            Default none.
        adopt: existing objects the stack may take over (``trainjobs:adopt``, each
            ``Kind/namespace/name``); every other object that exists and was not made
            by the stack stops ``pulumi up``. Default none.
        source: the file the stack came from.
        pod_security: the Pod Security Standards level every pod is checked against
            (``trainjobs:podSecurity``); default ``baseline``.
        ignore: check rules silenced for the whole stack (``trainjobs:ignore``: rule
            codes or dotted prefixes such as ``pss.restricted``); default none.
        unresolved: placeholder tokens standing for Pulumi Inputs whose values are not
            known yet (the components set it; a YAML stack has none): checks that would
            compare one with a plain value leave it to the check that runs once the
            values are known. Default none.
    """

    jobs: tuple[JobEntry, ...] = ()
    platform: tuple[PlatformEntry, ...] = ()
    target: Target = DEFAULT_TARGET
    k8s_version: str = DEFAULT_K8S_VERSION
    namespaces: tuple[str, ...] = ()
    shared_namespaces: tuple[str, ...] = ()
    adopt: tuple[ObjectKey, ...] = ()
    source: str = ""
    pod_security: Profile = DEFAULT_PROFILE
    ignore: tuple[str, ...] = ()
    config_keys: tuple[str, ...] = field(default=(), compare=False)
    unresolved: frozenset[str] = frozenset()

    def of_category(self, category: Category) -> list[PlatformEntry]:
        """The platform entries of one category, in input order."""
        return [p for p in self.platform if p.plugin.category == category]
