"""docs/python-api.md's typed-model example runs as written (under Pulumi mocks) and
registers what it says."""

from __future__ import annotations

import os
import re
from typing import Any

from tests.support.paths import ROOT
from tests.support.pulumi_harness import run_program


def _snippet() -> str:
    page = (ROOT / "docs" / "python-api.md").read_text()
    section = page[page.index("## Components from typed models and files") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the section has a python block"
    return match.group(1)


def test_the_python_api_example_runs() -> None:
    scope: dict[str, Any] = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir(ROOT)  # the snippet's paths are relative to the repository
    try:
        registered = run_program(lambda: exec(_snippet(), scope))
    finally:
        os.chdir(cwd)
    names = {(r.type, r.name) for r in registered}
    # The typed components take the Pulumi name they are given; the file's units are
    # named namespace/name, so the two Redis backends do not collide.
    assert ("trainjobs:index:RedisBackend", "redis") in names
    assert ("trainjobs:index:RedisBackend", "default/redis") in names
    assert ("trainjobs:index:TrainingJob", "mnist") in names
    pods = [r for r in registered if r.type == "kubernetes:core/v1:Pod"]
    assert any(p.name.startswith("kubeflow/mnist-") for p in pods), sorted(names)
    assert any(t == "kubernetes:kubeflow.org/v1alpha1:Caffe2Job" for t, _ in names)
