"""PaddlePaddle EDL (elastic deep learning): the ``TrainingJob`` of its Go controller.

``model`` is the custom resource, ``framework`` its defaults, rules and expansion
(the ``pods`` target), ``autoscaler`` the controller's trainer-scaling decision as
a pure function, ``inventory`` and ``whatif`` the cluster figures it decides on.
Facts: seed-systems.md §3.
"""

from trainjobs.frameworks.paddle_edl.framework import FRAMEWORK, PaddleEdl
from trainjobs.frameworks.paddle_edl.model import TrainingJob, TrainingJobSpec

__all__ = ["FRAMEWORK", "PaddleEdl", "TrainingJob", "TrainingJobSpec"]
