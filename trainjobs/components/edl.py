"""Typed component for the PaddlePaddle EDL controller."""

from __future__ import annotations

from trainjobs.components.platform import PlatformComponent

__all__ = ["EdlController"]


class EdlController(PlatformComponent):
    """The EDL controller: namespace paddlecloud, the TrainingJob CRD (retained on delete),
    a ServiceAccount with the RBAC its calls need, and its Deployment.

    ``spec`` is a ``trainjobs.platform.edl_controller.EdlControllerSpec`` (or its fields
    as a dict: image, maxLoadDesired, logLevel, resources, createNamespace). TrainingJobs
    on the operator target are created after it. Output ``outputs.namespace``.
    """

    kind = "EdlController"
