"""Shared helpers of the real-framework proofs: run an example, read its result lines."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest

from trainjobs.local import run_local
from trainjobs.local.supervisor import Outcome


def require(*modules: str) -> None:
    """Fail (never skip) when a runtime is missing: `make test` installs them all."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed: run `make proof-deps` (make test does)")


def run_example(path: Path, timeout: float, job: str | None = None) -> tuple[Outcome, str, str]:
    """Run a job file under run-local; the outcome, the replicas' output and the runner's."""
    out, err = io.StringIO(), io.StringIO()
    outcome = run_local(path, job=job, timeout=timeout, out=out, err=err, restart_delay=0.2)
    return outcome, out.getvalue(), err.getvalue()


def results(out: str) -> dict[str, dict[str, Any]]:
    """Each replica's ``result {json}`` line, by replica name."""
    found: dict[str, dict[str, Any]] = {}
    for line in out.splitlines():
        name, sep, text = line.partition(" | ")
        if sep and text.startswith("result "):
            found[name.strip()] = json.loads(text.removeprefix("result "))
    return found
