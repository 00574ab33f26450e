"""The objects an operator makes beside a job's pods, as data: which ones, named what,
holding what. The targets write them (``targets.objects``); a framework only says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BatchJobPlan",
    "ConfigMapPlan",
    "ObjectPlan",
    "ReplicaSetPlan",
    "RoleBindingPlan",
    "RolePlan",
    "ServiceAccountPlan",
    "SshKeySecretPlan",
]


@dataclass(frozen=True)
class ConfigMapPlan:
    """A ConfigMap of files the pods mount (a hostfile, scripts).

    Attributes:
        name: its name.
        data: file name → content, in the order they are written.
        labels: its labels; default none.
    """

    name: str
    data: Mapping[str, str]
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SshKeySecretPlan:
    """A ``kubernetes.io/ssh-auth`` Secret holding one SSH key pair. Its keys are
    placeholders the stack generates (``k8s.generated``), never a key in the render.

    Attributes:
        name: its name; the key pair is generated once per namespace and name.
        labels: its labels; default none.
        immutable: True when the operator makes it immutable; default False.
    """

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    immutable: bool = False


@dataclass(frozen=True)
class BatchJobPlan:
    """A ``batch/v1`` Job the operator makes (an MPI launcher).

    Attributes:
        name: its name.
        spec: the Job's spec (with its pod template), as plain data.
        labels: its labels; default none.
    """

    name: str
    spec: Mapping[str, Any]
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplicaSetPlan:
    """An ``apps/v1`` ReplicaSet the operator makes (EDL's master and parameter servers).

    Attributes:
        name: its name.
        spec: the ReplicaSet's spec (replicas, selector, pod template), as plain data.
        labels: its labels; default none.
    """

    name: str
    spec: Mapping[str, Any]
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServiceAccountPlan:
    """A ServiceAccount the operator makes for a pod that talks to the API server.

    Attributes:
        name: its name.
        labels: its labels; default none.
    """

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RolePlan:
    """An RBAC Role of the job's namespace.

    Attributes:
        name: its name.
        rules: its policy rules (``verbs``, ``apiGroups``, ``resources`` …), as plain data.
        labels: its labels; default none.
    """

    name: str
    rules: Sequence[Mapping[str, Any]]
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RoleBindingPlan:
    """A RoleBinding of the Role ``name`` to one ServiceAccount of the job's namespace.

    Attributes:
        name: its name, and the Role's.
        service_account: the ServiceAccount bound.
        labels: its labels; default none.
        subjects_first: True (default) when the operator writes ``subjects`` before
            ``roleRef`` (the MPI Operator), False when after (the EDL controller): the
            same render stays byte for byte the same.
    """

    name: str
    service_account: str
    labels: Mapping[str, str] = field(default_factory=dict)
    subjects_first: bool = True


ObjectPlan = (
    ConfigMapPlan
    | SshKeySecretPlan
    | BatchJobPlan
    | ReplicaSetPlan
    | ServiceAccountPlan
    | RolePlan
    | RoleBindingPlan
)
"""An object an operator makes beside the pods, which a target writes."""
