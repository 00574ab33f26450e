"""The ClusterTrainingRuntimes a Kubeflow Trainer v2.3.0 install ships, and runtimeRef lookup.

The YAML files under ``runtimes/`` are byte-for-byte copies of Trainer v2.3.0's
``manifests/base/runtimes`` (see ``runtimes/README.md``). The install applies them through
the ``manifests/overlays/runtimes`` kustomization, which adds the label
``trainer.kubeflow.org/webhook-validation: disabled`` to each and tags the Trainer's own
images ``v2.3.0``; :func:`builtin_runtimes` does the same two things, so a built-in here is
the object a cluster with Trainer installed holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any, Final

import yaml

from trainjobs.errors import Finding
from trainjobs.frameworks.trainjob.model import (
    API_GROUP,
    CLUSTER_RUNTIME_KIND,
    RUNTIME_KIND_REF,
    ClusterTrainingRuntime,
    Runtime,
    TrainingRuntime,
    TrainJob,
)

__all__ = ["BUILTIN_FILES", "TRAINER_VERSION", "builtin_runtimes", "resolve_runtime"]

TRAINER_VERSION: Final = "v2.3.0"
BUILTIN_FILES: Final = (
    "deepspeed_distributed.yaml",
    "mlx_distributed.yaml",
    "torch_distributed.yaml",
    "jax_distributed.yaml",
    "xgboost_distributed.yaml",
    "llama3_2_1B.yaml",
    "llama3_2_3B.yaml",
    "qwen2_5_1.5B.yaml",
)
"""The runtimes of ``manifests/overlays/runtimes`` at v2.3.0, in its kustomization's order."""
_VALIDATION_LABEL = ("trainer.kubeflow.org/webhook-validation", "disabled")
_TAGGED_IMAGES = frozenset(
    f"ghcr.io/kubeflow/trainer/{name}"
    for name in (
        "torchtune-trainer",
        "dataset-initializer",
        "model-initializer",
        "mlx-runtime",
        "deepspeed-runtime",
        "xgboost-runtime",
    )
)


def _tag_images(value: Any) -> Any:
    # kustomize's `images:` rewrites every `image:` field naming one of these.
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "image" and isinstance(item, str) and item in _TAGGED_IMAGES:
                out[key] = f"{item}:{TRAINER_VERSION}"
            else:
                out[key] = _tag_images(item)
        return out
    if isinstance(value, list):
        return [_tag_images(item) for item in value]
    return value


@cache
def builtin_runtimes() -> tuple[ClusterTrainingRuntime, ...]:
    """The shipped ClusterTrainingRuntimes as installed, in the install's order."""
    folder = resources.files("trainjobs.frameworks.trainjob") / "runtimes"
    out = []
    for name in BUILTIN_FILES:
        document = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
        document = _tag_images(document)
        labels = document["metadata"].setdefault("labels", {})
        labels[_VALIDATION_LABEL[0]] = _VALIDATION_LABEL[1]
        out.append(ClusterTrainingRuntime.model_validate(document))
    return tuple(out)


def _names(runtimes: Iterable[Runtime]) -> str:
    return ", ".join(sorted({r.name for r in runtimes})) or "none"


def resolve_runtime(
    job: TrainJob, declared: Sequence[Runtime] = ()
) -> tuple[Runtime | None, list[Finding]]:
    """The runtime ``job.spec.runtimeRef`` names: a runtime declared in the same render
    first (a TrainingRuntime only in the job's namespace), then the built-ins (for a
    ClusterTrainingRuntime); else None and a finding naming the runtimes known."""
    ref = job.spec.runtime_ref
    path = "spec.runtimeRef"
    kind, group = ref.kind_or_default, ref.api_group_or_default
    if group != API_GROUP or kind not in (CLUSTER_RUNTIME_KIND.kind, RUNTIME_KIND_REF.kind):
        return None, [
            Finding(
                code="trainjob.runtime_kind",
                path=path,
                message=f"unsupported runtime: {kind}.{group}; the Trainer knows "
                f"ClusterTrainingRuntime.{API_GROUP} and TrainingRuntime.{API_GROUP}",
                value={"apiGroup": group, "kind": kind},
                hint=f"set apiGroup: {API_GROUP} and kind: ClusterTrainingRuntime "
                "(or TrainingRuntime, in the job's namespace)",
            )
        ]
    if kind == RUNTIME_KIND_REF.kind:
        candidates: list[Runtime] = [
            r for r in declared if isinstance(r, TrainingRuntime) and r.namespace == job.namespace
        ]
        where = f"TrainingRuntimes in namespace {job.namespace!r}"
    else:
        own = [r for r in declared if isinstance(r, ClusterTrainingRuntime)]
        own_names = {r.name for r in own}
        candidates = [*own, *(r for r in builtin_runtimes() if r.name not in own_names)]
        where = f"ClusterTrainingRuntimes (declared, and Trainer {TRAINER_VERSION}'s built-ins)"
    for runtime in candidates:
        if runtime.name == ref.name:
            return runtime, []
    hint = f"use one of {_names(candidates)}"
    if kind == RUNTIME_KIND_REF.kind:
        hint += " or declare the TrainingRuntime in the same stack or file"
        other = [r for r in declared if isinstance(r, TrainingRuntime) and r.name == ref.name]
        if other:
            hint = (
                f"the TrainingRuntime {ref.name!r} is in namespace {other[0].namespace!r}; "
                "a TrainJob can only use one of its own namespace"
            )
    elif any(r.name == ref.name for r in declared if isinstance(r, TrainingRuntime)):
        hint = "that name is a TrainingRuntime: set spec.runtimeRef.kind: TrainingRuntime"
    else:
        hint += " or declare the ClusterTrainingRuntime in the same stack or file"
    return None, [
        Finding(
            code="trainjob.runtime_not_found",
            path=f"{path}.name",
            message=f"no {kind} named {ref.name!r} among the {where}",
            value=ref.name,
            hint=hint,
        )
    ]
