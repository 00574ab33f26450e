"""docs/python-api.md's "Components in your own program" runs as written, under Pulumi mocks: one
job on two clusters, Inputs resolved, the password secret, status and addresses."""

from __future__ import annotations

import collections
import re
from typing import Any

import pulumi

from tests.support.paths import ROOT
from tests.support.pulumi_harness import run_program


def _snippet() -> str:
    page = (ROOT / "docs" / "python-api.md").read_text()
    section = page[page.index("## Components in your own program") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the section has a python block"
    return match.group(1)


def test_the_readme_program_runs() -> None:
    exported: dict[str, Any] = {}

    def export(name: str, value: Any) -> None:
        pulumi.Output.from_input(value).apply(lambda v: exported.setdefault(name, v))

    def program() -> None:
        exec(_snippet(), {"__name__": "__main__"})

    original = pulumi.export
    pulumi.export = export
    try:
        registered = run_program(
            program,
            {"trainjobs:image": "registry.local/bert:1.0", "trainjobs:redisPassword": "s3cret"},
            secret_keys=["trainjobs:redisPassword"],
            live={"kubernetes:core/v1:Pod": {"status": {"phase": "Running"}}},
        )
    finally:
        pulumi.export = original
    counts = collections.Counter(r.urn for r in registered)
    assert [u for u, n in counts.items() if n > 1] == []
    pods = [r for r in registered if r.type == "kubernetes:core/v1:Pod"]
    assert len(pods) == 8  # 1 master + 3 workers, on each cluster
    assert {p.inputs["metadata"]["namespace"] for p in pods} == {"nlp"}
    assert {c["image"] for p in pods for c in p.inputs["spec"]["containers"]} == {
        "registry.local/bert:1.0"
    }
    secrets = [r for r in registered if r.type == "kubernetes:core/v1:Secret"]
    assert [s.inputs["stringData"] for s in secrets] == [{"password": "s3cret"}] * 2
    assert all(s.options["secret_inputs"] == ["stringData"] for s in secrets)
    assert exported["east.addresses"]["master"] == "bert-master-0.nlp.svc.cluster.local:23456"
    assert exported["west.status"]["pods"]["bert-worker-2"] == "Running"
