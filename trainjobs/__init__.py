"""trainjobs: distributed deep-learning training on Kubernetes as code.

The curated Python API::

    from trainjobs import load_path, run, dump_all
    rendering = run(load_path("examples/tf-mnist/tfjob.yaml"), target="pods")
    print(dump_all(rendering.manifests))

Pulumi components live in :mod:`trainjobs.components`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs._lazy import lazy_exports

if TYPE_CHECKING:
    from trainjobs.check import run
    from trainjobs.errors import Finding, Severity, SpecError
    from trainjobs.frameworks import REGISTRY
    from trainjobs.frameworks.pytorch import PyTorchJob
    from trainjobs.frameworks.tensorflow import TFJob
    from trainjobs.k8s.yamlio import dump_all
    from trainjobs.render import Rendering
    from trainjobs.spec import JobEntry, StackSpec, load_path

_HOMES = {
    "run": "trainjobs.check",
    "Finding": "trainjobs.errors",
    "Severity": "trainjobs.errors",
    "SpecError": "trainjobs.errors",
    "REGISTRY": "trainjobs.frameworks",
    "PyTorchJob": "trainjobs.frameworks.pytorch",
    "TFJob": "trainjobs.frameworks.tensorflow",
    "dump_all": "trainjobs.k8s.yamlio",
    "Rendering": "trainjobs.render",
    "JobEntry": "trainjobs.spec",
    "StackSpec": "trainjobs.spec",
    "load_path": "trainjobs.spec",
}

__all__ = [
    "REGISTRY",
    "Finding",
    "JobEntry",
    "PyTorchJob",
    "Rendering",
    "Severity",
    "SpecError",
    "StackSpec",
    "TFJob",
    "dump_all",
    "load_path",
    "run",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOMES)
