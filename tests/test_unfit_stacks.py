"""Stacks named ``Pulumi.unfit*.yaml`` must be refused: ``trainjobs check`` exits 2 and
says why. Their exact findings are asserted here instead of snapshotting a render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.platform.pools.docs import pool_doc
from tests.support.paths import STACKS, unfit_stack_files
from trainjobs.cli import main
from trainjobs.k8s.yamlio import dump_all

_TF = "stacks/../examples/tf-benchmarks/tfjob.yaml"
EXPECTED: dict[str, list[str]] = {
    "Pulumi.unfit.yaml": [
        f"error: {_TF}: jobs[0].spec.tfReplicaSpecs.Worker.replicas: the job runs 4 pods with "
        '16 GPUs at once on pool "a100", which packs them onto 4 nodes, but the pool has at '
        'most 2 nodes of 4 GPUs; fix: raise maxNodes of pool "a100" to 4, run fewer replicas, '
        "or set runPolicy.schedulingPolicy.minAvailable "
        "[not refused: the pods stay Pending (scheduler)]",
        "error: stacks/Pulumi.unfit.yaml: jobs[0].trainjobs.queue: the job needs 16 GPUs at "
        "once, but queue "
        '"team-a" has a quota of 8 nvidia.com/gpu; Kueue would never admit it; fix: raise '
        'spec.gpus of queue "team-a" to 16 or run fewer or smaller replicas '
        "[not refused: the pods stay Pending (Kueue never admits the job)]",
        "error: stacks/Pulumi.unfit.yaml: jobs[1].spec.tfReplicaSpecs.Worker: 8 GPUs per pod, "
        'but pool "a100" nodes have 4; fix: lower nvidia.com/gpu to 4 or use a pool with '
        "8-GPU nodes [not refused: the pods stay Pending (scheduler)]",
        "3 errors",
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


def _write(tmp_path: Path, *docs: dict[str, Any]) -> str:
    path = tmp_path / "stack.yaml"
    path.write_text(dump_all(docs))
    return str(path)


def _gpu_job(
    replicas: int = 1, pool: str = "a100", node_selector: dict[str, str] | None = None, **res: Any
) -> dict[str, Any]:
    """A TFJob whose workers have the container resources ``res`` and name ``pool``."""
    container = {"name": "tensorflow", "image": "tf:2", "resources": res or {"limits": {GPU: 4}}}
    pod: dict[str, Any] = {"containers": [container]}
    if node_selector:
        pod["nodeSelector"] = node_selector
    worker = {"replicas": replicas, "template": {"spec": pod}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": "training"},
        "spec": {"tfReplicaSpecs": {"Worker": worker}},
        "trainjobs": {"nodePool": pool},
    }


GPU = "nvidia.com/gpu"
_W = "jobs[0].spec.tfReplicaSpecs.Worker"
CASES = {
    "gpus per pod": (
        _gpu_job(limits={GPU: 16}),
        f'{_W}: 16 GPUs per pod, but pool "a100" nodes have 8',
    ),
    "cpu per pod": (
        _gpu_job(limits={GPU: 1, "cpu": "64"}),
        f'{_W}: 64 CPU per pod, but pool "a100" nodes offer 46',
    ),
    "memory per pod": (
        _gpu_job(limits={GPU: 1, "memory": "1Ti"}),
        f'{_W}: 1Ti memory per pod, but pool "a100" nodes offer 500Gi',
    ),
    "gang": (
        _gpu_job(replicas=5),
        f'{_W}.replicas: the job runs 5 pods with 20 GPUs at once on pool "a100", which packs '
        "them onto 3 nodes, but the pool has at most 2 nodes of 8 GPUs",
    ),
    "requests differ from limits": (
        _gpu_job(requests={GPU: 2}, limits={GPU: 4}),
        f"{_W}.template.spec.containers[0].resources.requests['{GPU}']: "
        f"{GPU} requests (2) must equal limits (4)",
    ),
    "conflicting node selector": (
        _gpu_job(node_selector={"trainjobs.dev/node-pool": "t4"}),
        f"{_W}.template.spec.nodeSelector['trainjobs.dev/node-pool']: pool \"a100\" selects "
        "trainjobs.dev/node-pool=a100, but the template selects trainjobs.dev/node-pool=t4",
    ),
    "unknown pool": (
        _gpu_job(pool="h100"),
        "jobs[0].trainjobs.nodePool: no nodePool named 'h100' in this stack",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_unschedulable_case_exits_2_naming_the_field_and_numbers(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job, expected = CASES[case]
    assert main(["check", _write(tmp_path, pool_doc(), job)]) == 2
    err = capsys.readouterr().err
    assert f"stack.yaml: {expected}" in err, err
    assert "Traceback" not in err
