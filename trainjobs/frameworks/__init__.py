"""Framework plugins: each training runtime's custom resource and operator behaviour."""

from trainjobs.frameworks.base import Framework, JobResource
from trainjobs.frameworks.registry import REGISTRY, Registry
from trainjobs.k8s.data import Manifest
from trainjobs.plan import KindRef

__all__ = ["REGISTRY", "Framework", "JobResource", "KindRef", "Manifest", "Registry"]
