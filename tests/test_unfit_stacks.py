"""Stacks named ``Pulumi.unfit*.yaml`` must be refused: ``trainjobs check`` exits 2 and
says why. Their exact findings are asserted here instead of snapshotting a render."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import STACKS, unfit_stack_files
from trainjobs.cli import main

_TF = "stacks/../examples/tf-benchmarks/tfjob.yaml"
EXPECTED: dict[str, list[str]] = {
    "Pulumi.unfit.yaml": [
        f"error: {_TF}: jobs[0].spec.tfReplicaSpecs.Worker.replicas: the job runs 4 pods with "
        '16 GPUs at once on pool "a100", which packs them onto 4 nodes, but the pool has at '
        'most 2 nodes of 4 GPUs; fix: raise maxNodes of pool "a100" to 4, run fewer replicas, '
        "or set runPolicy.schedulingPolicy.minAvailable",
        f"error: {_TF}: jobs[0].trainjobs.queue: the job needs 16 GPUs at once, but queue "
        '"team-a" has a quota of 8 nvidia.com/gpu; Kueue would never admit it; fix: raise '
        'spec.gpus of queue "team-a" to 16 or run fewer or smaller replicas',
        "error: stacks/Pulumi.unfit.yaml: jobs[1].spec.tfReplicaSpecs.Worker: 8 GPUs per pod, "
        'but pool "a100" nodes have 4; fix: lower nvidia.com/gpu to 4 or use a pool with '
        "8-GPU nodes",
        "3 errors; nothing was written",
    ],
}


def test_every_unfit_stack_has_its_findings_listed() -> None:
    assert sorted(p.name for p in unfit_stack_files()) == sorted(EXPECTED)


@pytest.mark.parametrize("path", unfit_stack_files(), ids=lambda p: p.name)
def test_check_refuses_an_unfit_stack_and_says_why(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(STACKS.parent)
    assert main(["check", str(path.relative_to(STACKS.parent))]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == EXPECTED[path.name]


@pytest.mark.parametrize("path", unfit_stack_files(), ids=lambda p: p.name)
def test_render_writes_nothing_for_an_unfit_stack(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["render", str(path), "-o", str(out)]) == 2
    assert not out.exists()
    assert "Traceback" not in capsys.readouterr().err
