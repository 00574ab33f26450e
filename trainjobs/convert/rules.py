"""The rules ``trainjobs convert`` reports: kinds it refuses and fields it cannot carry.

A field it cannot carry is a warning (the TrainJob is still written, without it) unless
``--strict`` asks for errors; a refused kind is always an error. Each names the field's
path in the user's file, its value, why Trainer v2.3 cannot hold it and what to do.
"""

from __future__ import annotations

from trainjobs.errors import Rule, Severity

__all__ = [
    "NOT_A_JOB",
    "NOT_CARRIED",
    "REFUSED_KIND",
    "UNKNOWN_FIELD",
]

NOT_CARRIED = Rule(
    "convert.not_carried",
    "not carried to the TrainJob: {why}",
    hint="{fix}",
    severity=Severity.WARNING,
)
UNKNOWN_FIELD = Rule(
    "convert.not_carried",
    "not carried to the TrainJob: convert knows no Trainer v2.3 field for it",
    hint="carry it by hand into the TrainingRuntime, or remove it",
    severity=Severity.WARNING,
)
REFUSED_KIND = Rule(
    "convert.kind",
    "a {kind} cannot become a TrainJob: {why}",
    hint="{fix}",
)
NOT_A_JOB = Rule(
    "convert.kind",
    "not a job convert knows: {what}",
    hint="convert takes PyTorchJob, MPIJob (v1, v2beta1), JAXJob and XGBoostJob",
)
