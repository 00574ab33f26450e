"""Measure ``pulumi up`` of a big pods-target job: trainjobs vs raw ConfigFile vs kubectl.

``python -m bench.cluster.run [--workers 64 128 256] [--mixed 100]`` starts a control plane
(tests/cluster/control_plane.py, the real programs built by tests/cluster/build.sh),
then for each size (and each mixed stack of that many small jobs of six frameworks)
brings the same stack up three ways, each in its own namespace so
that the three never share an object, interleaved (the order of the two Pulumi sides
alternates between sizes, so a neighbour's burst of load does not always hit the same
side):

* trainjobs: the project's stack program on a stack declaring the job and its namespace;
* pod-set (``--sides … pod-set``): the same, the job with ``registration: pod-set`` (its
  Pods and Services one resource, applied by server-side apply);
* raw: the objects ``trainjobs render`` prints for that stack, through
  ``pulumi_kubernetes.yaml.v2.ConfigFile`` with ``skip_await`` (bench/cluster/raw);
* kubectl: the same objects with ``kubectl apply --server-side``.

Per Pulumi side: ``pulumi up`` (create), ``pulumi preview --expect-no-changes`` (nothing
changed), the bytes of ``pulumi stack export``, the peak RSS of the Python program
(the language host's child) and of the engine. Times are wall seconds and CPU seconds
(all the processes' own: engine, language host, program, provider); on a shared
machine the CPU seconds are the steadier measure of work done.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project, render

EXAMPLE = REPO / "examples" / "tf-mnist" / "tfjob.yaml"
RAW_PROGRAM = Path(__file__).resolve().parent / "raw" / "__main__.py"
RELEASE_PROGRAM = Path(__file__).resolve().parent / "release" / "__main__.py"
TIMEOUT = 3600.0
"""Longest one pulumi command may take (a 1,024-worker up before issue 35's fix: ~40 min)."""


def _options(registration: str) -> dict[str, str]:
    """A job's trainjobs options: the pods target, and ``registration`` unless the default."""
    return {
        "target": "pods",
        **({"registration": registration} if registration != "objects" else {}),
    }


def job_document(
    name: str,
    namespace: str,
    workers: int,
    registration: str = "objects",
    example: Path = EXAMPLE,
) -> dict[str, Any]:
    """The example's job (default the tf-mnist TFJob) with ``workers`` Workers, on the
    pods target."""
    doc: dict[str, Any] = next(d for d in yaml.safe_load_all(example.read_text()) if d)
    doc["metadata"] = {"name": name, "namespace": namespace}
    (replica_specs,) = [v for k, v in doc["spec"].items() if k.endswith("ReplicaSpecs")]
    replica_specs["Worker"]["replicas"] = workers
    doc["trainjobs"] = _options(registration)
    return doc


def stack_text(
    namespace: str, workers: int, registration: str = "objects", example: Path = EXAMPLE
) -> str:
    """A stack file declaring the job and the namespace it goes to."""
    config = {
        "trainjobs:namespaces": [namespace],
        "trainjobs:jobs": [job_document("mnist", namespace, workers, registration, example)],
    }
    return yaml.safe_dump({"config": config}, sort_keys=False)


MIXED_EXAMPLES = (
    "tf-mnist/tfjob.yaml",
    "pytorch-ddp/pytorchjob.yaml",
    "xgboost-dist/xgboostjob.yaml",
    "jax-simple/jaxjob.yaml",
    "paddle-collective/paddlejob.yaml",
    "mxnet-legacy/mxjob.yaml",
)
"""The examples a mixed stack cycles through: six frameworks whose pods target needs no
generated secret (the raw side applies what ``trainjobs render`` prints, which holds
placeholders where a generated key or password goes)."""


def mixed_stack_text(namespace: str, jobs: int, registration: str = "objects") -> str:
    """A stack file of ``jobs`` small jobs of the examples in turn, on the pods target."""
    declared = []
    for i in range(jobs):
        path = REPO / "examples" / MIXED_EXAMPLES[i % len(MIXED_EXAMPLES)]
        doc: dict[str, Any] = next(d for d in yaml.safe_load_all(path.read_text()) if d)
        doc["metadata"] = {"name": f"{doc['kind'].lower()}-{i}", "namespace": namespace}
        doc["trainjobs"] = _options(registration)
        declared.append(doc)
    config = {"trainjobs:namespaces": [namespace], "trainjobs:jobs": declared}
    return yaml.safe_dump({"config": config}, sort_keys=False)


@dataclass(frozen=True)
class Case:
    """One stack each side brings up: one job of ``size`` workers, or ``size`` mixed jobs."""

    size: int
    mixed: bool = False
    example: Path = EXAMPLE
    """The job whose Workers a worker case multiplies (``--example``)."""

    @property
    def slug(self) -> str:
        """Names the case's stacks and namespaces (one length on every side)."""
        return f"mixed-{self.size}" if self.mixed else str(self.size)

    @property
    def label(self) -> str:
        if self.mixed:
            return f"{self.size} jobs, mixed"
        other = f" ({self.example.parent.name})" if self.example != EXAMPLE else ""
        return f"{self.size} workers{other}"

    def text(self, namespace: str, registration: str = "objects") -> str:
        if self.mixed:
            return mixed_stack_text(namespace, self.size, registration)
        return stack_text(namespace, self.size, registration, self.example)


@dataclass
class Peak:
    """Peak resident memory (VmHWM) of a command's descendants, sampled while it runs."""

    program: int = 0
    """The largest Python process below the command (the Pulumi program), in bytes."""
    engine: int = 0
    """The command's own process (the Pulumi engine), in bytes."""
    cpu: dict[int, tuple[str, float]] = field(default_factory=dict)
    """Each process's name and CPU seconds, as last sampled (a short-lived one may be
    missed; its seconds still count in the command's total)."""

    def cpu_by_program(self) -> dict[str, float]:
        """CPU seconds per program name (engine, language host, program, provider)."""
        totals: dict[str, float] = {}
        for name, seconds in self.cpu.values():
            totals[name] = totals.get(name, 0.0) + seconds
        return dict(sorted(totals.items(), key=lambda item: -item[1]))


def _children(pid: int) -> list[int]:
    # Each thread lists the children it started (Go starts them from any thread).
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _hwm(pid: int) -> tuple[str, int]:
    """The process's name and peak RSS in bytes (0 if it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "", 0
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    kb = fields.get("VmHWM", "0 kB").split()[0]
    return fields.get("Name", "").strip(), int(kb) * 1024


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """The process's own user + system CPU seconds (0 if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    # The name (field 2) may hold spaces; the fields after its closing parenthesis
    # start at field 3, so utime and stime (14, 15) are at 11 and 12 there.
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _sample(root: int, peak: Peak, stop: threading.Event) -> None:
    while not stop.is_set():
        name, hwm = _hwm(root)
        peak.engine = max(peak.engine, hwm)
        if name:
            peak.cpu[root] = (name, _cpu_seconds(root))
        todo = _children(root)
        while todo:
            pid = todo.pop()
            name, hwm = _hwm(pid)
            if name.startswith("python"):
                peak.program = max(peak.program, hwm)
            seconds = _cpu_seconds(pid)
            if name and seconds:
                peak.cpu[pid] = (name, seconds)
            todo.extend(_children(pid))
        stop.wait(0.2)


@dataclass
class Run:
    """One command's wall and CPU seconds and peak memory."""

    wall: float
    cpu: float
    peak: Peak
    stdout: str = field(repr=False)


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str], ok: Sequence[int] = (0,)) -> Run:
    """Run ``argv``; its wall and CPU seconds (its own and its descendants') and peaks."""
    cpu0, wall0 = _cpu_children(), time.monotonic()
    proc = subprocess.Popen(
        list(argv), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    peak, stop = Peak(), threading.Event()
    sampler = threading.Thread(target=_sample, args=(proc.pid, peak, stop), daemon=True)
    sampler.start()
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    finally:
        stop.set()
        sampler.join()
    wall, cpu = time.monotonic() - wall0, _cpu_children() - cpu0
    if proc.returncode not in ok:
        raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}\n{out[-6000:]}")
    return Run(wall, cpu, peak, out)


@dataclass
class Side:
    """What one side measured at one size."""

    up: Run
    preview: Run | None = None
    state: int = 0
    objects: int = 0


class PulumiSide:
    """A project copy (trainjobs' program, or the raw one) with its stack for one size."""

    profile: Path | None = None
    """Where the engine writes its CPU and memory profiles (``pulumi --profiling``), one
    per command, named ``<stack>-<command>``; None: no profiles."""

    def __init__(
        self,
        workdir: Path,
        cluster: ControlPlane,
        stack: str,
        program: Path | None = None,
        tree: Path | None = None,
    ) -> None:
        """``program``: the ``__main__.py`` to run instead of trainjobs' stack program."""
        extra = {} if tree is None else {"PYTHONPATH": str(tree)}
        self.project = Project(workdir, kubeconfig=cluster.kubeconfig, extra_env=extra)
        self.stack = stack
        if program is not None:
            shutil.copy2(program, self.project.root / "__main__.py")

    def pulumi(self, *args: str, ok: Sequence[int] = (0,)) -> Run:
        argv = ["pulumi", *args, "--stack", self.stack, "--non-interactive", "--color=never"]
        if self.profile is not None and args[0] in ("up", "preview"):
            self.profile.mkdir(parents=True, exist_ok=True)
            argv += ["--profiling", str(self.profile / f"{self.stack}-{args[0]}")]
        return timed(argv, self.project.root, self.project.env, ok)

    def measure(self) -> Side:
        up = self.pulumi("up", "--yes", "--skip-preview")
        preview = self.pulumi("preview", "--expect-no-changes")
        export = self.pulumi("stack", "export")
        objects = export.stdout.count('"type": "kubernetes:')
        return Side(up, preview, len(export.stdout.encode()), objects)


NAMESPACES = {
    "trainjobs": "tjs",
    "pod-set": "pst",
    "before": "old",
    "raw": "raw",
    "release": "rel",
    "kubectl": "kub",
}
"""Each side's namespace prefix, all of one length: every pod's TF_CONFIG names every
replica's address, namespace included, so a longer namespace alone made one side's
objects and state bigger (by 11 % at 256 workers, "trainjobs-" against "raw-")."""


def _bring_up(
    side: str,
    case: Case,
    work: Path,
    cluster: ControlPlane,
    base: Path | None,
    after: Path | None = None,
) -> Side:
    namespace = f"{NAMESPACES[side]}-{case.slug}"
    stack = f"{side}-{case.slug}"
    if side in ("trainjobs", "pod-set", "before"):
        tree = base if side == "before" else after
        project = PulumiSide(work / stack, cluster, stack, tree=tree)
        registration = "pod-set" if side == "pod-set" else "objects"
        project.project.init(stack, case.text(namespace, registration))
        measured = project.measure()
        if side == "pod-set":
            # One resource holds the pods: count what it made in the cluster.
            _check_pods(cluster, namespace, render(project.project.stack_file(stack)))
        return measured
    stack_file = work / f"{stack}.yaml"
    stack_file.write_text(case.text(namespace))
    rendered = render(stack_file)
    text = yaml.safe_dump_all(rendered, sort_keys=False)
    if side == "raw":
        project = PulumiSide(work / stack, cluster, stack, program=RAW_PROGRAM)
        (project.project.root / "rendered.yaml").write_text(text)
        project.project.init(stack)
        return project.measure()
    if side == "release":
        project = PulumiSide(work / stack, cluster, stack, program=RELEASE_PROGRAM)
        _write_chart(project.project.root / "chart", rendered)
        (project.project.root / "namespace.txt").write_text(namespace)
        project.project.init(stack)
        measured = project.measure()
        # One resource in the state: count what the release made in the cluster instead.
        _check_pods(cluster, namespace, rendered)
        return measured
    manifest = work / f"{stack}.objects.yaml"
    manifest.write_text(text)
    kubectl = str(cluster.bins["kubectl"])
    # Its discovery cache beside the run's files: each control plane has new ports, and
    # kubectl would keep a folder per address in the user's ~/.kube/cache.
    env = {
        **os.environ,
        "KUBECONFIG": str(cluster.kubeconfig),
        "KUBECACHEDIR": str(work / "kube-cache"),
    }
    argv = [kubectl, "apply", "--server-side", "-f", str(manifest)]
    return Side(timed(argv, work, env), objects=len(rendered))


def _check_pods(cluster: ControlPlane, namespace: str, rendered: Sequence[dict[str, Any]]) -> None:
    """Fail unless the cluster holds every rendered Pod (a side whose state holds one
    resource for them all proves its work in the cluster)."""
    made = len(cluster.client.items(f"/api/v1/namespaces/{namespace}/pods"))
    wanted = sum(1 for m in rendered if m["kind"] == "Pod")
    if made != wanted:
        raise RuntimeError(f"{made} of the {wanted} pods are in {namespace}")


CHART_FILE_BYTES = 4 * 2**20
"""Helm refuses a chart file over 5 MiB: the objects go in files of at most this much."""


def _write_chart(chart: Path, rendered: Sequence[dict[str, Any]]) -> None:
    """A chart of ``rendered`` but its Namespace, included verbatim (``.Files.Get``), in
    as many files (and one template each) as Helm's file size limit asks for."""
    (chart / "templates").mkdir(parents=True)
    (chart / "files").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: job\nversion: 0.1.0\n")
    chunks: list[list[str]] = [[]]
    size = 0
    for manifest in rendered:
        if manifest["kind"] == "Namespace":
            continue
        text = "---\n" + yaml.safe_dump(manifest, sort_keys=False)
        if size + len(text) > CHART_FILE_BYTES and chunks[-1]:
            chunks.append([])
            size = 0
        chunks[-1].append(text)
        size += len(text)
    for i, chunk in enumerate(chunks):
        name = f"objects-{i:03d}.yaml"
        (chart / "files" / name).write_text("".join(chunk))
        (chart / "templates" / name).write_text(f'{{{{ .Files.Get "files/{name}" }}}}\n')


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "—"


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _cell(side: Side | None, what: str, base: Side | None) -> str:
    """One cell: the measure, and its ratio to ``base`` (raw ConfigFile) when given."""
    if side is None:
        return "—"
    if what in ("up", "preview"):
        run = side.up if what == "up" else side.preview
        if run is None:
            return "—"
        other = None if base is None else (base.up if what == "up" else base.preview)
        if other is None:
            return f"{run.wall:.1f} s, cpu {run.cpu:.1f} s"
        return (
            f"{run.wall:.1f} s ({_ratio(run.wall, other.wall)}), "
            f"cpu {run.cpu:.1f} s ({_ratio(run.cpu, other.cpu)})"
        )
    if what == "state":
        if not side.state:
            return "—"
        return _mb(side.state) + (f" ({_ratio(side.state, base.state)})" if base else "")
    if what == "rss":
        if side.preview is None:
            return "—"
        peak = max(side.up.peak.program, side.preview.peak.program)
        return f"{peak / 2**20:.0f} MiB"
    raise ValueError(what)


ROWS = (
    ("up", "`pulumi up` (create)"),
    ("preview", "`pulumi preview`, nothing changed"),
    ("state", "state (`pulumi stack export`)"),
    ("rss", "Python program's peak RSS"),
)
TITLES = {
    "trainjobs": "trainjobs",
    "pod-set": "trainjobs, registration: pod-set",
    "before": "trainjobs before (--before)",
    "raw": "raw ConfigFile",
    "release": "one resource (Helm release, --release)",
    "kubectl": "kubectl apply --server-side",
}


RATIO_TO_RAW = ("trainjobs", "pod-set", "before", "release")
"""The columns whose cells give their ratio to the raw ConfigFile's."""


def moonshot(results: dict[Case, dict[str, Side]]) -> str:
    """The pod set against kubectl: its ``up`` and no-change ``preview`` wall time as a
    multiple of ``kubectl apply --server-side`` of the same objects (issue 35's part 2)."""
    lines = []
    for case, sides in sorted(results.items(), key=lambda item: (item[0].mixed, item[0].size)):
        pod_set, kubectl = sides.get("pod-set"), sides.get("kubectl")
        if pod_set is None or kubectl is None or pod_set.preview is None:
            continue
        lines.append(
            f"{case.label}: pod-set `up` {_ratio(pod_set.up.wall, kubectl.up.wall)} and "
            f"`preview` {_ratio(pod_set.preview.wall, kubectl.up.wall)} kubectl apply's wall time"
        )
    return "\n".join(lines)


def table(results: dict[Case, dict[str, Side]]) -> str:
    """The issue's rows: per case, trainjobs (ratio to raw) | raw | kubectl; then how the
    cost grew from one job size to the next."""
    columns = [c for c in TITLES if any(c in sides for sides in results.values())]
    lines = [
        "| stack (objects) | | " + " | ".join(TITLES[c] for c in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for case, sides in sorted(results.items(), key=lambda item: (item[0].mixed, item[0].size)):
        objects = sides["kubectl"].objects
        for i, (what, title) in enumerate(ROWS):
            head = f"{case.label} ({objects:,})" if i == 0 else ""
            cells = []
            for column in columns:
                base = sides.get("raw") if column in RATIO_TO_RAW else None
                shown = what == "up" or column != "kubectl"
                cells.append(_cell(sides.get(column), what, base) if shown else "—")
            lines.append(f"| {head} | {title} | {' | '.join(cells)} |")
    sizes = sorted((c for c in results if not c.mixed), key=lambda c: c.size)
    growth = []
    for small, big in itertools.pairwise(sizes):
        doublings = math.log2(big.size / small.size)
        parts = []
        for side in columns:
            if side not in results[small] or side not in results[big]:
                continue  # it failed at one of the sizes
            a, b = results[small][side].up, results[big][side].up
            factor = (b.cpu / a.cpu) ** (1 / doublings) if a.cpu and doublings else math.nan
            # Linear cost doubles with the job: per object, the cost grew by factor / 2.
            parts.append(f"{side} ×{factor:.2f} (per object ×{factor / 2:.2f})")
        growth.append(
            f"{small.size} → {big.size} workers, `up` cpu per doubling: " + ", ".join(parts)
        )
    return "\n".join([*lines, "", *growth, "", moonshot(results)]).rstrip() + "\n"


def cpu_split(results: dict[Case, dict[str, Side]]) -> str:
    """Where each Pulumi side's CPU went, per program (engine ``pulumi``, language host,
    the Python program, the Kubernetes provider): what the profile starts from."""
    lines = ["CPU seconds by program (sampled every 0.2 s):", ""]
    for case, sides in sorted(results.items(), key=lambda item: (item[0].mixed, item[0].size)):
        for side, measured in sides.items():
            for what, run in (("up", measured.up), ("preview", measured.preview)):
                if run is None or not run.peak.cpu:
                    continue
                split = ", ".join(
                    f"{name} {seconds:.1f}" for name, seconds in run.peak.cpu_by_program().items()
                )
                lines.append(f"    {case.label} {side} {what}: {split}")
    return "\n".join(lines)


def machine() -> str:
    """The machine and its load, to note beside the numbers."""
    cpus = os.cpu_count()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{platform.system()} {platform.machine()}, {cpus} CPUs, load average {load}, "
        f"Python {platform.python_version()}"
    )


class BenchPlane(ControlPlane):
    """The tests' control plane, with a CRD given minutes to be Established: on a loaded
    machine (a load of 10 on 2 cores) the tests' 30 s is not always enough."""

    def wait_established(self, name: str, timeout: float = 30) -> None:
        super().wait_established(name, max(timeout, 300))

    def start(self) -> None:
        """Start once the MPI Operator's fixed health port (8080) is free: one control
        plane per machine at a time (another test session's may hold it)."""
        deadline = time.monotonic() + 1800
        while _port_taken(8080):
            if time.monotonic() > deadline:
                raise RuntimeError("port 8080 stayed taken for 30 min (another control plane)")
            print("waiting for port 8080 (another control plane runs)", file=sys.stderr)
            time.sleep(10)
        super().start()


def _port_taken(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def _workdir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="trainjobs-bench-cluster-") as tmp:
        yield Path(tmp)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench; print the table (and write it to ``--out`` when given)."""
    parser = argparse.ArgumentParser(prog="python -m bench.cluster.run")
    parser.add_argument("--workers", type=int, nargs="*", default=[64, 128, 256])
    parser.add_argument(
        "--mixed",
        type=int,
        nargs="*",
        default=[],
        help="also a stack of this many small jobs of six frameworks (e.g. 100)",
    )
    parser.add_argument(
        "--example",
        type=Path,
        default=EXAMPLE,
        help="the job whose Workers --workers sets (a file with one job of a Worker replica "
        "type; default examples/tf-mnist/tfjob.yaml, whose every pod names every worker)",
    )
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("--workdir", type=Path, help="keep projects and logs here")
    parser.add_argument(
        "--before",
        type=Path,
        help="a tree of trainjobs from before a change (git archive …): its program is "
        "measured too, in the same run, as a column of its own",
    )
    parser.add_argument(
        "--tree",
        type=Path,
        help="the trainjobs tree whose program the trainjobs column runs; default this one",
    )
    parser.add_argument(
        "--sides",
        nargs="*",
        choices=("trainjobs", "pod-set", "raw"),
        default=["trainjobs", "pod-set", "raw"],
        help="the Pulumi sides to bring up (kubectl always runs; the ratios need raw)",
    )
    parser.add_argument(
        "--release",
        action="store_true",
        help="also bring each stack's objects up as one Helm release (one engine step for "
        "the whole job: the floor a registration per pod set would approach)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="write the engine's CPU and memory profiles of each up and preview here "
        "(read them with `go tool pprof -top <pulumi binary> <file>`)",
    )
    args = parser.parse_args(argv)
    PulumiSide.profile = args.profile
    results: dict[Case, dict[str, Side]] = {}
    example = args.example.resolve()
    cases = [Case(n, example=example) for n in args.workers]
    cases += [Case(n, mixed=True) for n in args.mixed]
    failed: list[str] = []
    with _workdir(args.workdir) as work, BenchPlane(work / "cluster") as cluster:
        print(f"control plane ready in {cluster.started_in:.0f}s", file=sys.stderr)
        for n, case in enumerate(cases):
            sides = [*args.sides, *(["before"] if args.before is not None else [])]
            # The order alternates from one case to the next.
            order = tuple(sides if n % 2 == 0 else reversed(sides))
            results[case] = {}
            extra = ("release",) if args.release else ()
            for side in (*order, *extra, "kubectl"):
                print(f"{case.label}: {side} …", file=sys.stderr, flush=True)
                try:
                    results[case][side] = _bring_up(
                        side, case, work, cluster, args.before, args.tree
                    )
                except RuntimeError as exc:
                    if side != "release":
                        raise
                    # Helm's own limits (a chart file, the release's Secret) end this
                    # side at some size: say so below the table and go on.
                    reason = next((x for x in str(exc).splitlines() if "error:" in x), "")
                    failed.append(f"{case.label}, {TITLES[side]}: {reason.strip()}")
                    continue
                up = results[case][side].up
                print(f"  up {up.wall:.1f}s wall {up.cpu:.1f}s cpu", file=sys.stderr, flush=True)
        out = f"{machine()}\n\n{table(results)}\n\n{cpu_split(results)}\n"
        if failed:
            out += "\nFailed:\n\n" + "\n".join(f"    {line}" for line in failed) + "\n"
    print(out)
    if args.out is not None:
        args.out.write_text(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
