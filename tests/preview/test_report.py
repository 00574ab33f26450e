"""A plan as a person reads it on a terminal (here: plain text, no colour)."""

from __future__ import annotations

import io

from rich.console import Console

from tests.preview.jobs import example, render, set_image, set_replicas
from trainjobs.preview.plan import make_plan
from trainjobs.preview.report import MAX_DIFF_BYTES, MAX_DIFFS, print_plan, totals


def _plain() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, color_system=None, soft_wrap=True, markup=False), buffer


def test_the_image_change_reads_like_pulumi_preview_in_words() -> None:
    mnist = [example("tf-mnist")]
    plan = make_plan(
        render(mnist, label="before"), render(mnist, label="after", edit=set_image("tf:2"))
    )
    out, buffer = _plain()
    print_plan(plan, out, diffs=False)
    assert buffer.getvalue() == (
        "before → after\n"
        "\n"
        "    KIND  NAMESPACE  NAME            PLAN     BECAUSE OF\n"
        "+-  Pod   kubeflow   mnist-chief-0   replace  spec.containers[0].image\n"
        "+-  Pod   kubeflow   mnist-ps-0      replace  spec.containers[0].image\n"
        "+-  Pod   kubeflow   mnist-worker-0  replace  spec.containers[0].image\n"
        "+-  Pod   kubeflow   mnist-worker-1  replace  spec.containers[0].image\n"
        "\n"
        "job mnist (kubeflow)\n"
        "  changing the image of job mnist recreates 4 Pods; "
        "the job restarts from its last checkpoint\n"
        "    recreates Pod kubeflow/mnist-chief-0: spec.containers[0].image changed\n"
        "    recreates Pod kubeflow/mnist-ps-0: spec.containers[0].image changed\n"
        "    recreates Pod kubeflow/mnist-worker-0: spec.containers[0].image changed\n"
        "    recreates Pod kubeflow/mnist-worker-1: spec.containers[0].image changed\n"
        "\n"
        "Resources:\n"
        "    +- 4 to replace\n"
        "    4 changes. 4 unchanged\n"
    )
    assert totals(plan) == "+- 4 to replace, 4 unchanged"


def test_diffs_are_printed_for_updates_and_replacements() -> None:
    mnist = [example("tf-mnist")]
    plan = make_plan(render(mnist), render(mnist, edit=set_image("tf:2")))
    out, buffer = _plain()
    print_plan(plan, out)
    text = buffer.getvalue()
    assert text.count("+    image: tf:2\n") == 4
    assert "\x1b[" not in text


def test_no_changes() -> None:
    mnist = [example("tf-mnist")]
    plan = make_plan(render(mnist, label="a"), render(mnist, label="b"))
    out, buffer = _plain()
    print_plan(plan, out)
    assert buffer.getvalue() == "a → b\n\nResources:\n    no changes. 8 unchanged\n"
    assert totals(plan) == "no changes (8 unchanged)"


def test_the_diffs_of_a_large_job_are_bounded() -> None:
    # One more worker of a 200-worker TFJob changes TF_CONFIG in every Pod: a diff of
    # each (two 7 kB lines) made 3 MB of text for a pull request. The table still lists
    # every object; the diffs stop at a bound and say how many were left out.
    mnist = [example("tf-mnist")]
    plan = make_plan(
        render(mnist, edit=set_replicas("Worker", 200)),
        render(mnist, edit=set_replicas("Worker", 201)),
    )
    out, buffer = _plain()
    print_plan(plan, out)
    text = buffer.getvalue()
    assert text.count("\n+-  Pod ") == 202
    shown = text.count("--- old: Pod ")
    assert 1 <= shown <= MAX_DIFFS
    assert f"… the diffs of {202 - shown} more objects are left out" in text
    assert len(text.encode()) < MAX_DIFF_BYTES + 200_000
