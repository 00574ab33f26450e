"""trainjobs benchmarks: one table of ratios measured side by side in one run.

Run with ``make bench`` (installs cdk8s, which runs on Node.js, into .venv first)
or ``.venv/bin/python -m bench.run [--quick]``. Absolute times depend on the
machine; the ratios are what the targets in BENCHMARKS.md are about. Every
input comes from the repository's examples (``bench.workloads``), so a framework
merged later is measured as soon as it has an example.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import io
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import yaml

from bench.cli import bench_cli
from bench.workloads import REPLICAS, framework_examples, mix, stack
from tests.support.corpus import scaled, stack_of
from tests.support.processes import descendants
from trainjobs.check import crd_schema, k8s_schema
from trainjobs.check import run as check_run
from trainjobs.check.pipeline import manifest_findings
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import RenderedJob, RenderedObject, Rendering, render
from trainjobs.spec import StackSpec, Target
from trainjobs.spec.entry import TARGETS

K8S_VERSION = "1.32"
SCALE_SIZES = (1, 8, 64, 256, 1024)
CLI_SIZES = (256, 1024, 2048, 4096)


@dataclass
class Row:
    """One line of the table."""

    benchmark: str
    measured: str
    ratio: str
    target: str
    met: bool | None


def cpu_seconds() -> float:
    """CPU time used so far by this process and its children that still run.

    The benchmark reports CPU time, not wall-clock time: on a shared machine a
    busy neighbour stretches the wall clock but not the work done, and cdk8s does
    most of its work in a Node.js child process, which ``time.process_time`` alone
    would miss. On an idle machine the two clocks agree.
    """
    total = time.process_time()
    if not os.path.isdir("/proc"):
        return total
    tick = os.sysconf("SC_CLK_TCK")
    for child in descendants(os.getpid()):
        try:
            with open(f"/proc/{child}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def timed(func: Callable[[], Any], repeat: int = 3) -> float:
    """The least CPU time (:func:`cpu_seconds`) of ``repeat`` runs, in seconds, GC off."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = cpu_seconds()
            func()
            times.append(cpu_seconds() - start)
        finally:
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


def _cdk8s_ready() -> bool:
    """Start cdk8s' Node.js runtime once, so no measurement pays for it."""
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
    try:
        cdk8s_synth([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "warm"}}])
    except ImportError:
        return False
    return True


def bench_render(rows: list[Row], sizes: Sequence[int], with_cdk8s: bool) -> None:
    for count in sizes:
        for target in TARGETS:
            if not mix(target):
                continue
            spec = stack(count, target)
            manifests = render(spec, target).manifests

            def ours_once(spec: StackSpec = spec, target: Target = target) -> None:
                dump_all(render(spec, target).manifests)

            ours = timed(ours_once)
            floor = timed(partial(pyyaml_floor, manifests))
            ratio = ours / floor
            rows.append(
                Row(
                    f"render {count:,} jobs × {REPLICAS}, {target} ({len(manifests):,} objects)",
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
                        "  vs cdk8s ApiObjects + synth",
                        f"{theirs * 1000:,.0f} ms",
                        f"{speedup:,.0f}× faster",
                        "≥ 50×",
                        speedup >= 50,
                    )
                )


def _broken(manifest: dict[str, Any]) -> dict[str, Any]:
    """A copy with the first field of ``spec`` given a value of the wrong type."""
    out = copy.deepcopy(manifest)
    spec = out.get("spec")
    if isinstance(spec, dict) and spec:
        key = next(iter(spec))
        spec[key] = "wrong" if isinstance(spec[key], (int, dict, list)) else 7
    else:
        out["metadata"]["name"] = 7
    return out


def check_corpus(size: int) -> list[RenderedObject]:
    """``size`` rendered objects of both targets, mixed frameworks; every 25th broken."""
    jobs = size // (REPLICAS * 2) + 1
    per_target = [list(render(stack(jobs, t), t).objects) for t in TARGETS if mix(t)]
    merged: list[RenderedObject] = []
    while len(merged) < size and any(per_target):
        for objects in per_target:
            if objects:
                merged.append(objects.pop(0))
    corpus = []
    for index, obj in enumerate(merged[:size]):
        manifest = _broken(obj.manifest) if index % 25 == 0 else obj.manifest
        corpus.append(RenderedObject(manifest, obj.origin, obj.source, obj.job))
    return corpus


def bench_check(rows: list[Row], size: int, sample: int) -> None:
    import kubernetes_validate

    corpus = check_corpus(size)
    # Cold: nothing compiled and nothing in the schema cache, as on a first run ever
    # (building the corpus checked its stacks, which loaded some schemas: forget them).
    for remembered in (
        crd_schema._versions,
        crd_schema._validator,
        k8s_schema._kind,
        k8s_schema._compiled,
        k8s_schema._validator,
    ):
        remembered.cache_clear()
    with tempfile.TemporaryDirectory(prefix="trainjobs-bench-cache-") as cache:
        saved = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = cache
        try:
            start = time.perf_counter()
            manifest_findings(corpus, K8S_VERSION)
            cold = time.perf_counter() - start
        finally:
            if saved is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = saved
    findings: list[Any] = []
    warm = timed(lambda: findings.append(manifest_findings(corpus, K8S_VERSION)))
    kinds = len({o.manifest["kind"] for o in corpus})
    rows.append(
        Row(
            f"check {size:,} manifests ({kinds} kinds, both targets), every check",
            f"{warm * 1000:.0f} ms warm, {cold * 1000:.0f} ms cold",
            "",
            "< 2 s",
            warm < 2.0,
        )
    )
    flagged = {
        f.path.split(": ", 1)[0] for f in findings[-1] if f.code in ("schema.k8s", "schema.crd")
    }
    step = max(1, len(corpus) // sample)
    subset = corpus[::step][:sample]
    ours: dict[int, bool] = {}
    theirs: dict[int, bool] = {}
    spent = 0.0
    for index, obj in enumerate(subset):
        start = time.perf_counter()
        try:
            kubernetes_validate.validate(obj.manifest, K8S_VERSION, strict=True)
            verdict = True
        except kubernetes_validate.ValidationError:
            verdict = False
        except kubernetes_validate.SchemaNotFoundError:
            continue  # a custom resource: kubernetes_validate knows no CRDs
        finally:
            spent += time.perf_counter() - start
        theirs[index] = verdict
        ours[index] = f"{obj.origin} → {obj.title}" not in flagged
    per_object_theirs = spent / len(subset)
    per_object_ours = warm / len(corpus)
    speedup = per_object_theirs / per_object_ours
    rows.append(
        Row(
            f"  vs kubernetes_validate.validate per object ({len(subset)} sampled)",
            f"{per_object_theirs * 1e6:,.0f} µs vs {per_object_ours * 1e6:.0f} µs",
            f"{speedup:,.0f}× faster",
            "≥ 300×",
            speedup >= 300,
        )
    )
    invalid = sum(1 for v in theirs.values() if not v)
    same = ours == theirs and invalid > 0
    rows.append(
        Row(
            f"  same verdicts ({invalid} invalid of {len(theirs)} built-in objects)",
            "identical" if same else "DIFFERENT",
            "",
            "identical",
            same,
        )
    )


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _register_bare(manifests: Sequence[dict[str, Any]]) -> None:
    """Each manifest as a plain pulumi_kubernetes resource, nothing else."""
    import pulumi_kubernetes as k8s

    from trainjobs.components.register import logical_name, resource_class

    for manifest in manifests:
        fields = {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind")}
        cls = resource_class(manifest["apiVersion"], manifest["kind"])
        name = logical_name(manifest)
        if cls is None:
            k8s.apiextensions.CustomResource(
                name, api_version=manifest["apiVersion"], kind=manifest["kind"], **fields
            )
        else:
            cls(name, **{_snake(k): v for k, v in fields.items()})


def _register_units(rendering: Rendering, spec: StackSpec) -> None:
    """Each unit of an already rendered stack as its trainjobs component."""
    import pulumi

    from trainjobs.components import PlatformComponent, TrainingJob
    from trainjobs.components.register import register_manifest

    entries = {p.path: p for p in spec.platform}
    for unit in rendering.units:
        if isinstance(unit, RenderedJob):
            TrainingJob(f"{unit.job.namespace}/{unit.job.name}", rendered=unit)
        elif unit.ref.category == "namespace":
            register_manifest(unit.objects[0].manifest, pulumi.ResourceOptions())
        else:
            entry = entries[unit.origin]
            PlatformComponent(entry.resource.name, rendered=(entry, unit))


def bench_pulumi(rows: list[Row], jobs: int) -> None:
    """The components against bare resources, registering the same rendered manifests."""
    from tests.support.pulumi_harness import run_program

    spec = stack(jobs, "pods")
    rendering = check_run(spec, target="pods")
    components = partial(run_program, lambda: _register_units(rendering, spec))
    bare = partial(run_program, lambda: _register_bare(rendering.manifests))
    components(), bare()  # imports and Pulumi's first-use costs, paid by neither side
    ours, theirs = float("inf"), float("inf")
    for _ in range(4):  # alternated, so both see the same state of the machine
        ours = min(ours, timed(components, repeat=1))
        theirs = min(theirs, timed(bare, repeat=1))
    ratio = ours / theirs
    rows.append(
        Row(
            f"pulumi: {len(rendering.manifests):,} manifests via components vs bare resources",
            f"{ours * 1000:,.0f} ms vs {theirs * 1000:,.0f} ms",
            f"{ratio:.2f}×",
            "≤ 1.2×",
            ratio <= 1.2,
        )
    )


def bench_resources(rows: list[Row]) -> None:
    """Pulumi resources one job of ``REPLICAS`` pods registers, per framework and target."""
    from tests.support.pulumi_harness import run_program
    from trainjobs.components import TrainingStack

    for name, example in framework_examples().items():
        docs = scaled(example, REPLICAS)
        if docs is None:
            continue
        spec = stack_of(docs)
        counts = []
        for target in example.targets:
            registered = run_program(partial(TrainingStack, spec, target))
            counts.append(f"{target} {len(registered)}")
        rows.append(
            Row(
                f"pulumi resources, one {name} job of {REPLICAS} pods",
                ", ".join(counts),
                "",
                "",
                None,
            )
        )


def bench_scale(rows: list[Row], sizes: Sequence[int]) -> None:
    """One job from 1 to 1,024 pods, per framework: the time per pod must not grow.

    Per-pod time falls at first (a job's fixed costs spread over more pods); what
    is measured is how much it grows from its lowest to 1,024 pods.
    """
    for name, example in framework_examples().items():
        times: dict[int, float] = {}
        for pods in sizes:
            docs = scaled(example, pods)
            if docs is None:
                continue
            spec = stack_of(docs)
            times[pods] = timed(partial(render, spec, "pods"), repeat=5)
        big = max(times)
        per_pod = {n: t / n for n, t in times.items() if n >= 64}
        growth = per_pod[big] / min(per_pod.values()) if per_pod else 1.0
        flat = " / ".join(f"{t * 1e6:.0f}" for t in per_pod.values())
        rows.append(
            Row(
                f"scale: one {name} job, 1 to {big:,} pods",
                f"{times[big] * 1000:.1f} ms; µs/pod at {'/'.join(map(str, per_pod))}: {flat}",
                f"growth {growth:.2f}×",
                "< 50 ms, growth ≤ 1.5×",
                times[big] < 0.05 and growth <= 1.5,
            )
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
    parser.add_argument("--quick", action="store_true", help="small sizes, no cdk8s (a smoke run)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows: list[Row] = []
    with_cdk8s = not args.quick and _cdk8s_ready()
    steps: list[tuple[str, Callable[[], None]]] = [
        (
            "render",
            partial(bench_render, rows, (10,) if args.quick else (10, 100, 1000), with_cdk8s),
        ),
        (
            "check",
            partial(bench_check, rows, 1000 if args.quick else 10_000, 60 if args.quick else 200),
        ),
        ("pulumi", partial(bench_pulumi, rows, 5 if args.quick else 25)),
        ("resources", partial(bench_resources, rows)),
        ("scale", partial(bench_scale, rows, (1, 8, 64) if args.quick else SCALE_SIZES)),
        ("cli", partial(bench_cli, rows, (64, 256) if args.quick else CLI_SIZES, Row)),
    ]
    for name, step in steps:
        began = time.perf_counter()
        # Pulumi's warnings and the renders' advice would break up the table.
        with contextlib.redirect_stderr(io.StringIO()):
            step()
        print(f"bench: {name} took {time.perf_counter() - began:.0f} s", file=sys.stderr)
    print_table(rows)
    print()
    for target in TARGETS:
        print(f"{target} mix: {', '.join(mix(target)) or '-'}")
    if not with_cdk8s and not args.quick:
        print("cdk8s is not installed: `make bench` installs it (it needs Node.js)")
    missed = [r.benchmark for r in rows if r.met is False]
    if missed:
        print(f"{len(missed)} target(s) missed; see BENCHMARKS.md for the profile and plan.")
    print(
        f"Python {sys.version.split()[0]} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"each time is the best of several runs; {time.perf_counter() - started:.0f} s in all."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
