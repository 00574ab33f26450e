"""Typed components for the rendezvous backends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pulumi

from trainjobs.components.platform import PlatformArgs, PlatformComponent, SpecInput, is_document
from trainjobs.components.secrets import placeholder_groups
from trainjobs.k8s.model import K8sModel
from trainjobs.render import RenderedUnit
from trainjobs.spec.entry import PlatformEntry
from trainjobs.spec.stack import DEFAULT_K8S_VERSION

__all__ = ["NfsBackend", "RedisBackend", "RedisBackendArgs"]


@dataclass(frozen=True)
class RedisBackendArgs(PlatformArgs):
    """A :class:`RedisBackend`'s arguments, typed: those of every platform component,
    and the password."""

    password: pulumi.Input[str] | None = None
    """The password as a Pulumi Input (a secret manager's value), kept as a secret; it
    turns ``spec.password`` on. Default: generated, unless ``spec.password`` is false."""


class RedisBackend(PlatformComponent):
    """A Redis service jobs rendezvous through: Deployment, Service, password Secret and
    NetworkPolicy (both on unless ``spec`` says ``password: false`` / ``networkPolicy: false``).

    ``spec`` is a ``trainjobs.platform.redis.RedisBackendSpec`` (or its fields as a
    dict, whose strings may be Pulumi Inputs). Jobs given ``backend=<this>`` get
    REDIS_HOST/REDIS_PORT (and REDIS_PASSWORD from the generated Secret), the label its
    NetworkPolicy admits, and are created after it. Output ``outputs.address``.

    ``password``: the password as a Pulumi Input (a secret manager's value); it is
    stored as a secret and turns ``spec.password`` on. Default: Pulumi generates one
    (a ``GeneratedPassword``, kept as a secret) unless ``spec.password`` is false.
    """

    kind = "RedisBackend"

    def __init__(
        self,
        name: str,
        spec: PlatformArgs | SpecInput = None,
        *,
        password: pulumi.Input[str] | None = None,
        namespace: pulumi.Input[str] | None = None,
        rendered: tuple[PlatformEntry, RenderedUnit] | None = None,
        uses: Sequence[PlatformComponent] = (),
        k8s_version: str = DEFAULT_K8S_VERSION,
        secret: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        # The base component reads its options from one PlatformArgs: only the password
        # is this kind's own.
        if isinstance(spec, PlatformArgs):
            args = spec
        else:
            args = RedisBackendArgs(
                spec, namespace, uses, k8s_version=k8s_version, secret=secret, password=password
            )
        if isinstance(args, RedisBackendArgs):
            password = args.password
        self._password = password
        # A spec of the wrong type is the base's to refuse, with the argument's name.
        given = args.spec
        if password is not None and (given is None or isinstance(given, Mapping | K8sModel)):
            data = given.to_manifest() if isinstance(given, K8sModel) else given or {}
            if is_document(data):  # a whole document: the password goes in its spec
                data = {**data, "spec": {**(data.get("spec") or {}), "password": True}}
            else:
                data = {**data, "password": True}
            args = replace(args, spec=data)
        super().__init__(name, args, rendered=rendered, opts=opts)

    def given_passwords(self) -> Mapping[str, pulumi.Input[str]]:
        password = getattr(self, "_password", None)
        if password is None:
            return {}
        objects = [o.manifest for o in self.rendered.objects]
        return {group: password for group in placeholder_groups(objects, "password")}


class NfsBackend(PlatformComponent):
    """A shared file system (NFS export or existing claim) mounted in every pod of a job.

    ``spec`` is a ``trainjobs.platform.nfs.NfsBackendSpec``. Creates no objects;
    jobs given ``backend=<this>`` mount it and get NFS_PATH.
    """

    kind = "NfsBackend"
