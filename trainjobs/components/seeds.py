"""Typed components for the seed systems' platform kinds: their operators and data preparation."""

from __future__ import annotations

from trainjobs.components.platform import PlatformComponent

__all__ = ["Caffe2Operator", "DatasetJob", "MSOperator", "MSOperatorV2"]


class Caffe2Operator(PlatformComponent):
    """The archived kubeflow/caffe2-operator: CRD (kept on delete), ServiceAccount,
    least-privilege RBAC and a Deployment of the image you built.

    ``spec`` is a ``trainjobs.platform.caffe2_operator.Caffe2OperatorSpec``; ``image``
    is required (upstream published none).
    """

    kind = "Caffe2Operator"


class MSOperator(PlatformComponent):
    """The 2020 ms-operator (MSJob kubeflow.org/v1): its Helm chart's objects, least privilege.

    ``spec`` is a ``trainjobs.platform.ms_operator.MSOperatorSpec``.
    """

    kind = "MSOperator"


class MSOperatorV2(PlatformComponent):
    """The 2022 ms-operator (MSJob mindspore.gitee.com/v1): its deploy/v1 objects.

    ``spec`` is a ``trainjobs.platform.ms_operator_v2.MSOperatorV2Spec``.
    """

    kind = "MSOperatorV2"


class DatasetJob(PlatformComponent):
    """A batch Job that prepares data on a share; jobs given ``backend=<this>`` mount the
    share and are created after the Job has succeeded.

    ``spec`` is a ``trainjobs.platform.dataset.DatasetJobSpec``.
    """

    kind = "DatasetJob"
