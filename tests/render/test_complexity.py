"""Work grows with the job, never with its square: counted, not timed.

A render's Python function calls are counted (``sys.setprofile``) at two sizes of
one job. Pods and their fields grow linearly with the replicas; long strings that
grow with the job (TF_CONFIG lists every host in every pod) must cost C-level work
only (``json.dumps``, regular expressions, ``str.join``), never a Python loop per
character or per peer. A quadratic step anywhere shows as a call ratio near 16 for
a job four times bigger, far above the linear 4.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from bench.workloads import framework_examples
from tests.support.corpus import scaled, stack_of
from trainjobs.k8s import _emitter
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import render

SMALL, BIG = 16, 64


def python_calls(func: Callable[[], Any]) -> int:
    """How many functions ``func`` calls, Python and built-in (``len`` in a loop per
    character counts once per character)."""
    count = 0

    def profiler(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profiler)
    try:
        func()
    finally:
        sys.setprofile(None)
    return count


def _render_and_dump(docs: list[dict[str, Any]]) -> Callable[[], Any]:
    spec = stack_of(docs)
    return lambda: dump_all(render(spec, "pods").manifests)


def _counted_cold(docs: list[dict[str, Any]]) -> int:
    """Calls of one render and dump with the emitter's per-string caches empty, so
    both sizes pay for every string they write (one-off caches, such as compiled
    schemas, were filled by an earlier run)."""
    for cache in (_emitter._scalar_cached, _emitter._key, _emitter._block):
        cache.cache_clear()
    return python_calls(_render_and_dump(docs))


EXAMPLES = framework_examples()


@pytest.mark.parametrize("framework", sorted(EXAMPLES))
def test_render_work_is_linear_in_the_pods(framework: str) -> None:
    example = EXAMPLES[framework]
    small, big = scaled(example, SMALL), scaled(example, BIG)
    if small is None or big is None:
        pytest.fail(f"{framework}'s example no longer scales to {SMALL} and {BIG} pods")
    _render_and_dump(small)()  # one-off costs (imports, schemas) paid by neither side
    ratio = _counted_cold(big) / _counted_cold(small)
    # Four times the pods: linear work gives about 4 (a little under: fixed costs spread).
    assert ratio <= 4 * 1.25, f"{framework}: {ratio:.2f} times the calls for 4 times the pods"


def test_long_strings_never_go_through_the_per_character_analysis(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PyYAML's analyze_scalar is a Python loop per character: for a TF_CONFIG of every
    # host in every pod it made the emitter quadratic (17 s for 1,024 workers).
    def refuse(text: str) -> None:
        raise AssertionError(f"analyze_scalar called for {text[:60]!r}")

    monkeypatch.setattr(_emitter._ANALYSER, "analyze_scalar", refuse)
    _emitter._scalar_cached.cache_clear()
    try:
        docs = scaled(EXAMPLES["tensorflow"], BIG)
        assert docs is not None
        text = _render_and_dump(docs)()
        assert text.count("TF_CONFIG") >= BIG
    finally:
        _emitter._scalar_cached.cache_clear()
