"""``trainjobs convert``: Kubeflow v1 jobs as Trainer v2 TrainJobs.

:func:`convert_job` converts one document; :func:`convert_text` every job of a file of
jobs or a stack config, rewriting each converted document (or stack entry) in place in
the text and leaving the rest of the file — comments included — as it was.
"""

from __future__ import annotations

from trainjobs.convert.files import FileConversion, convert_text
from trainjobs.convert.job import Conversion, convert_job

__all__ = ["Conversion", "FileConversion", "convert_job", "convert_text"]
