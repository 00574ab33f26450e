"""Targets: how a job's plan becomes Kubernetes objects.

``operator`` emits the custom resource its operator consumes; ``pods`` the Pods,
Services and Jobs the operator would have created, so no operator is needed;
``trainer`` a Kubeflow Trainer v2 TrainJob and its runtime; ``jobset`` the JobSet the
Trainer controller would make of a TrainJob. A target takes only the job's plan. One
module each, listed once in
``targets.registry``; their names are ``targets.names``'.

The names below are read from their modules on first use (``trainjobs._lazy``): the
command line reads the target names without loading a target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs._lazy import lazy_exports

if TYPE_CHECKING:
    from trainjobs.targets.base import TargetPlugin
    from trainjobs.targets.names import DEFAULT_TARGET, TARGETS, Target, is_target
    from trainjobs.targets.registry import PLUGINS, expand, supports

_HOMES = {
    "DEFAULT_TARGET": "trainjobs.targets.names",
    "PLUGINS": "trainjobs.targets.registry",
    "TARGETS": "trainjobs.targets.names",
    "Target": "trainjobs.targets.names",
    "TargetPlugin": "trainjobs.targets.base",
    "expand": "trainjobs.targets.registry",
    "is_target": "trainjobs.targets.names",
    "supports": "trainjobs.targets.registry",
}

__all__ = [
    "DEFAULT_TARGET",
    "PLUGINS",
    "TARGETS",
    "Target",
    "TargetPlugin",
    "expand",
    "is_target",
    "supports",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOMES)
