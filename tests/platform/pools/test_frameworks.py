"""Placement goes through the Framework contract, so it works for every framework and
target: each example job, with every replica type sent to a pool, lands on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.platform.pools.docs import pool_doc
from tests.support.corpus import is_job
from tests.support.paths import EXAMPLES, example_job_files
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import load_all
from trainjobs.platform import API_VERSION
from trainjobs.spec import parse_documents

SELECTOR = {"trainjobs.dev/node-pool": "big", "karpenter.k8s.aws/instance-gpu-name": "a100"}
TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}


def _pod_specs(manifests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Kind/name → pod spec of every Pod, and of every workload's pod template (Job …)."""
    specs = {}
    for m in manifests:
        name = f"{m['kind']}/{m['metadata']['name']}"
        if m["kind"] == "Pod":
            specs[name] = m["spec"]
        elif m["apiVersion"] in ("apps/v1", "batch/v1"):
            specs[name] = m["spec"]["template"]["spec"]
    return specs


def _cases() -> list[tuple[Path, list[dict[str, Any]], str]]:
    """Each job of each example file that has pod templates, on every target of its
    framework; ``docs`` holds that job and the file's other documents (no other job)."""
    cases = []
    for path in example_job_files():
        every = [d for d in load_all(path.read_text()) if isinstance(d, dict)]
        others = [d for d in every if not is_job(d)]
        # Documents the job names (a Trainer runtime) come with it.
        named = [d for d in others if d.get("apiVersion") != API_VERSION]
        for job in (d for d in every if is_job(d)):
            (entry,) = parse_documents([*named, {**job, "trainjobs": {}}]).jobs
            if not list(entry.framework.pod_templates(entry.job)):
                continue  # no templates, no placement: test_no_templates_no_pool
            docs = [*others, job]
            cases += [(path, docs, target) for target in entry.framework.targets]
    return cases


@pytest.mark.parametrize(
    ("path", "docs", "target"),
    _cases(),
    ids=lambda v: f"{v.parent.name}" if isinstance(v, Path) else v if isinstance(v, str) else "",
)
def test_every_replica_type_named_lands_on_the_pool(
    path: Path, docs: list[dict[str, Any]], target: str
) -> None:
    platform = [d for d in docs if d.get("apiVersion") == API_VERSION]
    (doc,) = [d for d in docs if is_job(d)]
    platform += [d for d in docs if d.get("apiVersion") != API_VERSION and not is_job(d)]
    entry = parse_documents([*platform, {**doc, "trainjobs": {}}]).jobs[0]
    roles = [t.role for t in entry.framework.pod_templates(entry.job)]
    # The job keeps its own options (a backend …); every replica type goes to the pool.
    options = {
        **doc.get("trainjobs", {}),
        "nodePool": dict.fromkeys(roles, "big"),
        "target": target,
    }
    # A generous pool, so the schedulability rule passes every example.
    big = pool_doc("big", gpusPerNode=8, cpu=94, memory="1100Gi", maxNodes=64)
    (rendered,) = run(parse_documents([*platform, big, {**doc, "trainjobs": options}])).jobs
    for template in rendered.entry.framework.pod_templates(rendered.job):
        spec = template.template["spec"]
        assert spec["nodeSelector"].items() >= SELECTOR.items(), template.path
        assert TOLERATION in spec["tolerations"], template.path
    if target == "pods":
        specs = _pod_specs([o.manifest for o in rendered.objects])
        assert specs
        for name, spec in specs.items():
            assert spec["nodeSelector"].items() >= SELECTOR.items(), name


def test_the_mpi_launcher_without_gpus_stays_off_the_pool() -> None:
    (doc,) = load_all(
        (example_job_files()[0].parents[1] / "mpi-horovod-benchmarks" / "mpijob.yaml").read_text()
    )
    big = pool_doc("big", gpusPerNode=8, cpu=94, memory="1100Gi", maxNodes=4)
    rendering = run(
        parse_documents([big, {**doc, "trainjobs": {"nodePool": "big"}}]), target="pods"
    )
    specs = _pod_specs(rendering.manifests)
    launchers = [spec for name, spec in specs.items() if "launcher" in name]
    assert launchers
    assert all("nodeSelector" not in spec for spec in launchers)
    assert specs["Pod/horovod-benchmarks-worker-3"]["nodeSelector"] == SELECTOR


def test_no_templates_no_pool() -> None:
    (doc,) = load_all((EXAMPLES / "paddle-edl-fit-a-line" / "trainingjob.yaml").read_text())
    with pytest.raises(SpecError) as err:
        run(parse_documents([pool_doc(), {**doc, "trainjobs": {"nodePool": "a100"}}]))
    assert [f.render() for f in err.value.findings] == [
        "error: jobs[0].trainjobs.nodePool: TrainingJob exposes no pod templates to trainjobs, "
        "so it cannot be placed on a node pool (got 'a100'); fix: remove nodePool and set the "
        "job's own node selector and tolerations"
    ]
