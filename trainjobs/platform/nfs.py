"""NfsBackend: a shared file system jobs rendezvous through (Caffe2's ``nfs`` backend).

The share is either an NFS export (server + path) or an existing
PersistentVolumeClaim. It creates no objects of its own; every pod of a job that
refers to it mounts the share and gets ``NFS_PATH`` set to the mount point.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding, Rule
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import K8sModel
from trainjobs.plan import BackendBinding, JobPlan
from trainjobs.platform.base import BackendKind, PlatformResource, Reference

__all__ = ["NfsBackend", "NfsBackendKind", "NfsBackendSpec"]

TWO_SOURCES = Rule(
    "nfs.source",
    "give either server and path, or claimName, not both",
    hint="remove claimName to mount the export directly, or server and path",
)
HALF_EXPORT = Rule(
    "nfs.source",
    "an NFS export needs both server and path",
    hint="add it, or name an existing PersistentVolumeClaim in claimName",
)
RELATIVE_MOUNT = Rule("nfs.mount_path", "the mount path must be absolute", hint="e.g. /mnt/{name}")
CLAIM_NAMESPACE = Rule(
    "backend.claim_namespace",
    "backend {backend!r} mounts claim {claim!r} of namespace {namespace!r}, but the job runs "
    "in {job_namespace!r}",
    hint="a pod mounts claims of its own namespace only; use an export (server/path) or a "
    "claim in the job's namespace",
)


class NfsBackendSpec(K8sModel):
    """``spec`` of an NfsBackend: an NFS export or an existing claim, and where to mount it."""

    server: str | None = Field(
        default=None, description="NFS server host name or address; with 'path'."
    )
    path: str | None = Field(
        default=None, description="Exported path on the server; with 'server'."
    )
    claim_name: str | None = Field(
        default=None,
        description=(
            "An existing PersistentVolumeClaim in the job's namespace, instead of server/path."
        ),
    )
    mount_path: str | None = Field(
        default=None,
        description=(
            "Where containers see the share, and the value of NFS_PATH; default /mnt/<name>."
        ),
    )
    read_only: bool = Field(default=False, description="Mount read-only; default false.")


class NfsBackend(PlatformResource):
    """An NfsBackend document."""

    kind: Literal["NfsBackend"] = "NfsBackend"
    spec: NfsBackendSpec


class NfsBackendKind(BackendKind[NfsBackend]):
    """Binds jobs to a shared file system."""

    title = "shared file system for rendezvous (Caffe2 nfs backend)"
    default_namespace = None

    def mount_path(self, resource: PlatformResource) -> str:
        return self.document(resource).spec.mount_path or f"/mnt/{resource.name}"

    def validate(self, resource: PlatformResource) -> list[Finding]:
        spec = self.document(resource).spec
        export = spec.server is not None or spec.path is not None
        if export and spec.claim_name is not None:
            return [TWO_SOURCES.at("spec.claimName", spec.claim_name)]
        if spec.claim_name is None and (spec.server is None or spec.path is None):
            missing = "server" if spec.server is None else "path"
            return [HALF_EXPORT.at(f"spec.{missing}")]
        mount = self.mount_path(resource)
        if not mount.startswith("/"):
            return [RELATIVE_MOUNT.at("spec.mountPath", mount, name=resource.name)]
        return []

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        return []

    def binding(self, resource: PlatformResource) -> BackendBinding:
        """The share as a volume, mounted at ``mount_path`` in every container, and NFS_PATH."""
        spec = self.document(resource).spec
        volume_name = f"{resource.name}-share"
        source: dict[str, Any]
        if spec.claim_name is not None:
            source = {"persistentVolumeClaim": {"claimName": spec.claim_name}}
        else:
            source = {"nfs": {"server": spec.server, "path": spec.path}}
        if spec.read_only:
            next(iter(source.values()))["readOnly"] = True
        mount: dict[str, Any] = {"name": volume_name, "mountPath": self.mount_path(resource)}
        if spec.read_only:
            mount["readOnly"] = True
        return BackendBinding(
            "nfs",
            resource.name,
            path=self.mount_path(resource),
            env=({"name": "NFS_PATH", "value": self.mount_path(resource)},),
            volumes=({"name": volume_name, **source},),
            volume_mounts=(mount,),
        )

    def outputs(self, resource: PlatformResource) -> dict[str, str]:
        return {"path": self.mount_path(resource)}

    def job_problems(
        self, resource: PlatformResource, plan: JobPlan, ref: Reference
    ) -> list[Finding]:
        spec = self.document(resource).spec
        namespace = resource.metadata.namespace
        if spec.claim_name is not None and namespace and namespace != plan.namespace:
            return [
                CLAIM_NAMESPACE.at(
                    ref.path,
                    ref.name,
                    backend=resource.name,
                    claim=spec.claim_name,
                    namespace=namespace,
                    job_namespace=plan.namespace,
                )
            ]
        return []


KIND = NfsBackendKind()
