"""trainjobs benchmarks: one table of ratios measured side by side in one run.

Run with ``make bench`` (installs cdk8s, which runs on Node.js, into .venv first)
or ``.venv/bin/python -m bench.run [--quick]``. Absolute times depend on the
machine; the ratios are what the targets in BENCHMARKS.md are about.
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import yaml

from bench.workloads import job_documents, stack
from trainjobs.check import run as check_run
from trainjobs.check.pipeline import manifest_findings
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import RenderedObject, render
from trainjobs.spec import Target, parse_documents

K8S_VERSION = "1.32"


@dataclass
class Row:
    """One line of the table."""

    benchmark: str
    measured: str
    ratio: str
    target: str
    met: bool | None


def timed(func: Callable[[], Any], repeat: int = 3) -> float:
    """The best of ``repeat`` wall-clock runs, in seconds (GC off while timing)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
        gc.enable()
    return min(times)


def pyyaml_floor(manifests: list[dict[str, Any]]) -> str:
    """The same objects through PyYAML's C dumper and nothing else."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(manifests, Dumper=dumper, sort_keys=False)


def cdk8s_synth(manifests: list[dict[str, Any]]) -> str:
    """The same objects as cdk8s ApiObjects in one Chart, synthesised to YAML by cdk8s."""
    import cdk8s

    app = cdk8s.App()
    chart = cdk8s.Chart(app, "bench")
    for index, manifest in enumerate(manifests):
        body = {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind", "metadata")}
        obj = cdk8s.ApiObject(
            chart,
            f"o{index}",
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=manifest["metadata"],
        )
        for key, value in body.items():
            obj.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
    return str(app.synth_yaml())


def bench_render(rows: list[Row], sizes: tuple[int, ...], with_cdk8s: bool) -> None:
    for count in sizes:
        spec = stack(count)
        for target in ("operator", "pods"):
            manifests = render(spec, target).manifests

            def trainjobs_render(spec: Any = spec, target: str = target) -> None:
                dump_all(render(spec, target).manifests)  # type: ignore[arg-type]

            ours = timed(trainjobs_render)
            floor = timed(partial(pyyaml_floor, manifests))
            label = f"render {count} jobs × 8, {target} ({len(manifests)} objects)"
            ratio = ours / floor
            rows.append(
                Row(
                    label,
                    f"{ours * 1000:.0f} ms",
                    f"{ratio:.2f}× PyYAML C dump",
                    "≤ 2×",
                    ratio <= 2,
                )
            )
            if with_cdk8s:
                theirs = timed(partial(cdk8s_synth, manifests), repeat=1)
                speedup = theirs / ours
                rows.append(
                    Row(
                        f"  vs cdk8s ({len(manifests)} ApiObjects)",
                        f"{theirs * 1000:.0f} ms",
                        f"{speedup:.1f}× faster",
                        "≥ 50×",
                        speedup >= 50,
                    )
                )


def _corpus(size: int) -> list[RenderedObject]:
    """``size`` rendered objects, every 25th made invalid in a different way."""
    jobs = size // 16 + 1
    objects = list(render(stack(jobs), "pods").objects)[:size]
    corpus = []
    for index, obj in enumerate(objects):
        manifest = copy.deepcopy(obj.manifest)
        if index % 25 == 0 and manifest["kind"] == "Pod":
            container = manifest["spec"]["containers"][0]
            container["ports"][0]["containerPort"] = "http"  # wrong type
        elif index % 25 == 0:
            manifest["spec"]["clusterIP"] = 7  # wrong type
        corpus.append(RenderedObject(manifest, obj.origin, obj.source, obj.job))
    return corpus


def bench_check(rows: list[Row], size: int, sample: int) -> None:
    import kubernetes_validate

    corpus = _corpus(size)
    cold_start = time.perf_counter()
    manifest_findings(corpus, K8S_VERSION)
    cold = time.perf_counter() - cold_start
    warm = timed(lambda: manifest_findings(corpus, K8S_VERSION))
    rows.append(
        Row(
            f"check {size} manifests, every check",
            f"{warm * 1000:.0f} ms warm, {cold * 1000:.0f} ms cold",
            "",
            "< 2 s",
            warm < 2.0,
        )
    )
    # Verdicts: trainjobs' schema check against kubernetes_validate, object by object.
    subset = corpus[:sample]
    ours = {id(o) for o in subset}
    flagged = {
        id(o)
        for o in subset
        if any(
            f.path.startswith(f"{o.origin} → {o.title}:")
            for f in manifest_findings([o], K8S_VERSION)
            if f.code.startswith("schema")
        )
    }
    start = time.perf_counter()
    theirs = set()
    for obj in subset:
        try:
            kubernetes_validate.validate(obj.manifest, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError:
            theirs.add(id(obj))
    per_object_theirs = (time.perf_counter() - start) / len(subset)
    per_object_ours = warm / len(corpus)
    speedup = per_object_theirs / per_object_ours
    same = flagged == theirs and ours >= flagged
    rows.append(
        Row(
            f"  vs kubernetes_validate.validate per object ({sample} sampled)",
            f"{per_object_theirs * 1e6:.0f} µs vs {per_object_ours * 1e6:.0f} µs",
            f"{speedup:.0f}× faster",
            "≥ 100×",
            speedup >= 100,
        )
    )
    rows.append(
        Row(
            f"  identical verdicts ({len(theirs)} invalid of {sample})",
            "identical" if same else "DIFFERENT",
            "",
            "identical",
            same,
        )
    )


def bench_pulumi(rows: list[Row], jobs: int) -> None:
    import pulumi
    import pulumi_kubernetes as k8s

    from tests.support.pulumi_harness import run_program
    from trainjobs.components import TrainingJob
    from trainjobs.components.register import logical_name

    spec = stack(jobs)
    rendering = check_run(spec, target="pods")
    manifests = rendering.manifests

    def components() -> None:
        for job in rendering.jobs:
            TrainingJob(job.job.name, rendered=job)

    def bare() -> None:
        for m in manifests:
            cls = k8s.core.v1.Pod if m["kind"] == "Pod" else k8s.core.v1.Service
            cls(
                logical_name(m),
                metadata=m["metadata"],
                spec=m["spec"],
                opts=pulumi.ResourceOptions(),
            )

    ours = timed(lambda: run_program(components), repeat=3)
    theirs = timed(lambda: run_program(bare), repeat=3)
    ratio = ours / theirs
    rows.append(
        Row(
            f"pulumi: {len(manifests)} manifests via components vs bare resources",
            f"{ours * 1000:.0f} ms vs {theirs * 1000:.0f} ms",
            f"{ratio:.2f}×",
            "≤ 1.2×",
            ratio <= 1.2,
        )
    )


def bench_scale(rows: list[Row]) -> None:
    per_replica = []
    for replicas in (1, 8, 64, 256, 1024):
        spec = parse_documents(job_documents(1, replicas + 1)[:1])
        seconds = timed(partial(render, spec, "pods"), repeat=5)
        per_replica.append(seconds / replicas)
        if replicas == 1024:
            rows.append(
                Row(
                    "scale: one job with 1,024 workers, pods target",
                    f"{seconds * 1000:.1f} ms",
                    "",
                    "< 50 ms",
                    seconds < 0.05,
                )
            )
    spread = max(per_replica[2:]) / min(per_replica[2:])
    rows.append(
        Row(
            "scale: render time per replica, 64 → 1,024 replicas",
            " / ".join(f"{t * 1e6:.0f} µs" for t in per_replica[2:]),
            f"max/min {spread:.2f}",
            "roughly constant (≤ 1.5)",
            spread <= 1.5,
        )
    )
    one = parse_documents(job_documents(1, 8)[:1])
    targets: tuple[Target, ...] = ("operator", "pods")
    for target in targets:
        count = len(render(one, target).objects)
        rows.append(
            Row(f"pulumi resources for one 8-replica job, {target}", f"{count + 1}", "", "", None)
        )


def print_table(rows: list[Row]) -> None:
    header = Row("benchmark", "measured", "ratio", "target", None)
    cells = [
        (
            r.benchmark,
            r.measured,
            r.ratio,
            r.target,
            {True: "met", False: "MISSED", None: ""}[r.met],
        )
        for r in [header, *rows]
    ]
    cells[0] = (*cells[0][:4], "status")
    widths = [max(len(c[i]) for c in cells) for i in range(5)]
    for index, row in enumerate(cells):
        print(" | ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
        if index == 0:
            print("-+-".join("-" * w for w in widths))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, no cdk8s (CI smoke)")
    args = parser.parse_args(argv)
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    rows: list[Row] = []
    sizes = (10,) if args.quick else (10, 100, 1000)
    bench_render(rows, sizes, with_cdk8s=not args.quick)
    bench_check(rows, 1000 if args.quick else 10_000, 200 if args.quick else 1000)
    bench_pulumi(rows, 5 if args.quick else 50)
    bench_scale(rows)
    print_table(rows)
    missed = [r.benchmark for r in rows if r.met is False]
    if missed:
        print(f"\n{len(missed)} target(s) missed; see BENCHMARKS.md for the profile and plan.")
    print(f"\nPython {sys.version.split()[0]}; each time is the best of several runs.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
