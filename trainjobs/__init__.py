"""trainjobs: distributed deep-learning training on Kubernetes as code.

The curated Python API::

    from trainjobs import load_path, run, dump_all
    rendering = run(load_path("examples/tf-mnist/tfjob.yaml"), target="pods")
    print(dump_all(rendering.manifests))

Pulumi components live in :mod:`trainjobs.components`.
"""

from trainjobs.check import run
from trainjobs.errors import Finding, Severity, SpecError
from trainjobs.frameworks import REGISTRY
from trainjobs.frameworks.pytorch import PyTorchJob
from trainjobs.frameworks.tensorflow import TFJob
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import Rendering
from trainjobs.spec import JobEntry, StackSpec, load_path

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
