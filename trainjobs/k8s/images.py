"""Images an operator injects into the pods it makes, pinned.

An operator that adds a helper container of its own (the Training Operator's MPIJob v1
launcher gets a ``kubectl-delivery`` init container) names a default image, often a
moving ``:latest``. trainjobs pins one: the ``pods`` target renders it, and the operator
install trainjobs renders passes it to the operator, so both make the same pod.
"""

from __future__ import annotations

__all__ = ["KUBECTL_DELIVERY_IMAGE"]

KUBECTL_DELIVERY_IMAGE = "ghcr.io/kubeflow/training-v1/kubectl-delivery:v1-4445c12"
"""The MPIJob v1 launcher's ``kubectl-delivery`` init container image.

The Training Operator's ``--mpi-kubectl-delivery-image`` default is
``…/kubectl-delivery:latest`` (v1.9.1 to v1.9.4). Its release CI also tags every build
``v1-<short commit>``; this is the build of the v1.9.4 tag's commit (``4445c12``).
"""
