"""A job's roles as pod sets, and what a backend adds to them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trainjobs.k8s.data import PodTemplate, deep_copy

__all__ = ["BackendBinding", "PodSet", "with_backend"]


@dataclass(frozen=True)
class PodSet:
    """One role of a job: ``replicas`` pods made from one pod template.

    Attributes:
        role: the replica type it belongs to (``Worker``, ``Launcher`` …); the key
            ``JobPlan.with_templates`` and :meth:`Framework.with_templates` take.
        path: where it sits in the user's job (``spec.tfReplicaSpecs.Worker.template``).
        template: the PodTemplateSpec.
        replicas: how many pods are made from it.
    """

    role: str
    path: str
    template: Mapping[str, Any]
    replicas: int = 1


@dataclass(frozen=True)
class BackendBinding:
    """What a job's pods need to reach a rendezvous backend (a Redis service, an NFS share …).

    A backend in the stack produces it; ``JobPlan.with_backend`` applies it to a job's
    plan: it appends ``env`` and ``volume_mounts`` to every container and ``volumes``
    to every pod template; where the custom resource names the backend itself (Caffe2's
    ``backendSpecs``, ``Framework.carried_backends``) the framework writes it there and
    the templates get only the env its controller does not set.

    Attributes:
        type: ``redis``, ``nfs`` or ``etcd``.
        name: the backend's name in the stack, for messages.
        host: the address pods use (``redis.training.svc``); empty for file backends.
        port: the port pods use; 0 for file backends.
        path: where a shared file system is mounted in the containers; empty otherwise.
        env: env entries every container gets (``REDIS_HOST`` …), secrets as secretKeyRef.
        volumes: pod volumes the backend needs (the NFS share).
        volume_mounts: container mounts of those volumes.
    """

    type: str
    name: str
    host: str = ""
    port: int = 0
    path: str = ""
    env: tuple[Mapping[str, Any], ...] = ()
    volumes: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()


def with_backend(
    template: Mapping[str, Any], binding: BackendBinding, env: bool = True
) -> PodTemplate:
    """A copy of ``template`` with the binding's volumes, mounts and (unless ``env`` is
    false) env appended, after what the user wrote, to every container."""
    out = deep_copy(template)
    spec = out.setdefault("spec", {})
    if binding.volumes:
        spec["volumes"] = [*(spec.get("volumes") or []), *map(deep_copy, binding.volumes)]
    for container in spec.get("containers") or []:
        if not isinstance(container, dict):
            continue  # not a container: the schema check names it at its path
        if env and binding.env:
            container["env"] = [*(container.get("env") or []), *map(deep_copy, binding.env)]
        if binding.volume_mounts:
            mounts = map(deep_copy, binding.volume_mounts)
            container["volumeMounts"] = [*(container.get("volumeMounts") or []), *mounts]
    return out
