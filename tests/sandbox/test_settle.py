"""When ``simulate`` counts a pod as settled: bound pods only once their kwok node has
answered (a phase past Pending), so the report never shows a placed pod as Pending."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.sandbox.simulate import _pod_settled


def _pod(node: str = "", phase: str = "", scheduled: str = "", scheduler: str = "") -> Any:
    spec: dict[str, Any] = {"nodeName": node} if node else {}
    if scheduler:
        spec["schedulerName"] = scheduler
    status: dict[str, Any] = {"phase": phase} if phase else {}
    if scheduled:
        status["conditions"] = [
            {"type": "PodScheduled", "status": "False", "reason": scheduled, "message": "0/2"}
        ]
    return {"metadata": {"name": "p"}, "spec": spec, "status": status}


@pytest.mark.parametrize(
    "pod,settled",
    [
        (_pod(), False),
        (_pod(node="n-0"), False),
        (_pod(node="n-0", phase="Pending"), False),
        (_pod(node="n-0", phase="Running"), True),
        (_pod(node="n-0", phase="Succeeded"), True),
        (_pod(node="n-0", phase="Failed"), True),
        (_pod(scheduled="Unschedulable", phase="Pending"), True),
        (_pod(scheduler="volcano", phase="Pending"), True),
    ],
)
def test_pod_settled(pod: Any, settled: bool) -> None:
    assert _pod_settled(pod) is settled
