"""Targets: how a job becomes Kubernetes objects.

``operator`` emits the custom resource its operator consumes; ``pods`` emits
the Pods and Services the operator would have created, so no operator is needed.
"""

from trainjobs.targets.base import TARGETS, TargetPlugin, expand

__all__ = ["TARGETS", "TargetPlugin", "expand"]
