"""Typed components for the rendezvous backends."""

from __future__ import annotations

from trainjobs.components.platform import PlatformComponent

__all__ = ["NfsBackend", "RedisBackend"]


class RedisBackend(PlatformComponent):
    """A Redis service jobs rendezvous through: Deployment, Service, optional password Secret.

    ``spec`` is a ``trainjobs.platform.redis.RedisBackendSpec`` (or its fields as a
    dict). Jobs given ``backend=<this>`` get REDIS_HOST/REDIS_PORT (and REDIS_PASSWORD
    from the generated Secret) and are created after it. Output ``outputs.address``.
    """

    kind = "RedisBackend"


class NfsBackend(PlatformComponent):
    """A shared file system (NFS export or existing claim) mounted in every pod of a job.

    ``spec`` is a ``trainjobs.platform.nfs.NfsBackendSpec``. Creates no objects;
    jobs given ``backend=<this>`` mount it and get NFS_PATH.
    """

    kind = "NfsBackend"
