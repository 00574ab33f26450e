"""Renders of the examples with one thing changed, for the preview tests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.k8s.yamlio import load_all
from trainjobs.preview.objects import Side, side_from_rendering
from trainjobs.spec import Target, parse_documents

Edit = Callable[[dict[str, Any]], None]


def example(name: str) -> dict[str, Any]:
    """The job document of ``examples/<name>/``."""
    (path,) = (EXAMPLES / name).glob("*job.yaml")
    doc: dict[str, Any] = load_all(path.read_text())[0]
    return doc


def render(
    docs: list[dict[str, Any]], target: Target = "pods", label: str = "", edit: Edit | None = None
) -> Side:
    """The render of ``docs`` (after ``edit`` changes a copy of the first) as a preview side."""
    docs = copy.deepcopy(docs)
    if edit is not None:
        edit(docs[0])
    rendering = run(parse_documents(docs, source="jobs.yaml"), target=target)
    return side_from_rendering(rendering, label or "render")


def set_image(image: str) -> Edit:
    def edit(job: dict[str, Any]) -> None:
        for spec in next(
            iter(v for k, v in job["spec"].items() if k.endswith("ReplicaSpecs"))
        ).values():
            spec["template"]["spec"]["containers"][0]["image"] = image

    return edit


def set_replicas(replica_type: str, count: int) -> Edit:
    def edit(job: dict[str, Any]) -> None:
        specs = next(v for k, v in job["spec"].items() if k.endswith("ReplicaSpecs"))
        specs[replica_type]["replicas"] = count

    return edit
