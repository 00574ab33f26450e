"""Framework plugins: each training runtime's custom resource and operator behaviour."""

from trainjobs.frameworks.base import Framework, JobResource, KindRef, Manifest
from trainjobs.frameworks.registry import REGISTRY, Registry

__all__ = ["REGISTRY", "Framework", "JobResource", "KindRef", "Manifest", "Registry"]
