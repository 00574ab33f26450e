"""DatasetJob: a batch Job that prepares data on a shared volume before training starts.

The seed's data preparation (Caffe2's ``make_mnist_db``, converting MNIST to
LevelDB) is a run-once step, not a training job: it becomes a ``batch/v1`` Job
that mounts a share — an NFS export or an existing claim, given as an NfsBackend's
spec is — and writes there. A training job names the DatasetJob as its backend
(``trainjobs: {backend: mnist-data}``) and is bound to the share exactly as to an
NfsBackend: the share is mounted at the same path, ``NFS_PATH`` points there (a
Caffe2Job's ``backendSpecs`` becomes ``nfs`` with that path). Because the training
job depends on the DatasetJob, the Pulumi programs create its pods only after the
Job has *succeeded*: the Kubernetes provider waits for a Job's ``Complete``
condition (for ``spec.timeout``, a Pulumi custom timeout) and fails the update if
the Job fails.

The Job keeps its pod after it finishes (no TTL), so its log can be read; a Job
cannot be changed in place, so changing the spec makes Pulumi replace it, which
runs it again. Write the step so a second run finds its output and stops.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field, field_validator

from trainjobs.errors import Finding, Rule
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import K8sModel
from trainjobs.plan import BackendBinding, JobPlan
from trainjobs.platform import nfs
from trainjobs.platform.base import BackendKind, PlatformMeta, PlatformResource, Reference
from trainjobs.platform.workload import component_labels

__all__ = ["KIND", "DatasetJob", "DatasetJobKind", "DatasetJobSpec"]

DEFAULT_CONTAINER_NAME = "prepare"


NO_IMAGE = Rule(
    "dataset_job.image",
    "the preparation container needs an image",
    hint="set the image that has the preparation tool, e.g. make_mnist_db",
)


class DatasetJobSpec(K8sModel):
    """``spec`` of a DatasetJob."""

    share: nfs.NfsBackendSpec = Field(
        description=(
            "Where the data goes: server and path of an NFS export, or claimName of an "
            "existing claim, and mountPath (default /mnt/<name>), as in an NfsBackend."
        )
    )
    container: dict[str, Any] = Field(
        description=(
            "The core/v1 Container that writes the data (image, command, args, env, "
            "resources …); name defaults to 'prepare'. The share is mounted into it."
        )
    )
    backoff_limit: int = Field(
        default=2, ge=0, description="Retries before the Job counts as failed; default 2."
    )
    timeout: str = Field(
        default="30m",
        description=(
            "How long `pulumi up` waits for the Job to succeed before failing the update, "
            "a whole number of s, m or h; default 30m."
        ),
    )

    @field_validator("timeout")
    @classmethod
    def _duration(cls, value: str) -> str:
        if not re.fullmatch(r"[1-9][0-9]*[smh]", value):
            raise ValueError("must be a whole number of s, m or h; fix: write e.g. 30m or 2h")
        return value


class DatasetJob(PlatformResource):
    """A DatasetJob document."""

    kind: Literal["DatasetJob"] = "DatasetJob"
    spec: DatasetJobSpec


class DatasetJobKind(BackendKind[DatasetJob]):
    """Renders the preparation Job and binds training jobs to its share."""

    title = "batch Job preparing data on a shared volume, before the jobs that use it"

    def _share(self, resource: PlatformResource) -> nfs.NfsBackend:
        """The share as an NfsBackend of the same name and namespace."""
        meta = PlatformMeta(name=resource.name, namespace=self.namespace(resource))
        return nfs.NfsBackend(metadata=meta, spec=self.document(resource).spec.share)

    def validate(self, resource: PlatformResource) -> list[Finding]:
        findings = [
            replace(f, path=f.path.replace("spec.", "spec.share.", 1))
            for f in nfs.KIND.validate(self._share(resource))
        ]
        if not self.document(resource).spec.container.get("image"):
            findings.append(NO_IMAGE.at("spec.container.image"))
        return findings

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        binding = self.binding(resource)
        labels = component_labels("dataset-job", resource, "data-preparation")
        container = {"name": DEFAULT_CONTAINER_NAME, **spec.container}
        container["volumeMounts"] = [
            *(container.get("volumeMounts") or []),
            *(dict(m) for m in binding.volume_mounts),
        ]
        return [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": resource.name,
                    "namespace": self.namespace(resource),
                    "labels": labels,
                },
                "spec": {
                    "backoffLimit": spec.backoff_limit,
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [container],
                            "volumes": [dict(v) for v in binding.volumes],
                        },
                    },
                },
            }
        ]

    def await_timeout(self, resource: PlatformResource, manifest: Manifest) -> str:
        """The Job is awaited until it has succeeded, for ``spec.timeout``."""
        return self.document(resource).spec.timeout

    def binding(self, resource: PlatformResource) -> BackendBinding:
        """The share, mounted and in NFS_PATH, exactly as an NfsBackend binds it."""
        return nfs.KIND.binding(self._share(resource))

    def outputs(self, resource: PlatformResource) -> dict[str, str]:
        return nfs.KIND.outputs(self._share(resource))

    def job_problems(
        self, resource: PlatformResource, plan: JobPlan, ref: Reference
    ) -> list[Finding]:
        return nfs.KIND.job_problems(self._share(resource), plan, ref)


KIND = DatasetJobKind()
