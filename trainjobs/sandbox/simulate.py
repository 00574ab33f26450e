"""``trainjobs simulate``: a stack's jobs on a throwaway sandbox shaped like its node pools.

A control plane of the real programs starts in a temporary folder (its programs die
with this process), with kwok nodes made from the stack's GpuNodePools
(:mod:`trainjobs.sandbox.nodes`). The stack's objects — what ``trainjobs render`` makes
and ``pulumi up`` registers, also when ``check`` refuses them — are applied with the real
kubectl (server-side apply); the real kube-scheduler and operators then act for a
bounded time. Per job the report says whether it started (every pod it needs bound to a
node), each pod's node or the reason the scheduler wrote on it, and where this differs
from what ``check`` predicted.

Without a gang scheduler in the sandbox, the default scheduler places what fits of a
gang: a job with only some pods placed is reported as not started, since its training
cannot begin until every worker runs.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml

from trainjobs.errors import Finding, Severity, SpecError
from trainjobs.platform.pools.spec import GpuNodePool
from trainjobs.sandbox.binaries import binaries
from trainjobs.sandbox.control_plane import ControlPlane
from trainjobs.sandbox.nodes import default_nodes, pool_nodes

if TYPE_CHECKING:
    from trainjobs.render import RenderedJob

__all__ = ["JobReport", "PodReport", "SimulationReport", "simulate"]

JOB_LABELS = (
    "training.kubeflow.org/job-name",
    "jobset.sigs.k8s.io/jobset-name",
    "trainer.kubeflow.org/trainjob-name",
    "batch.kubernetes.io/job-name",
)
"""Pod labels that name the job a pod belongs to (Training/MPI Operator, JobSet and the
Trainer, batch Jobs)."""
DEFAULT_SECONDS = 30.0
WEBHOOK_ATTEMPTS = 5


@dataclass(frozen=True)
class PodReport:
    """One pod: the node it was bound to, or why the scheduler left it Pending."""

    name: str
    node: str | None
    phase: str
    reason: str = ""
    """The scheduler's message on the PodScheduled condition (``0/2 nodes are available:
    2 Insufficient nvidia.com/gpu.``); empty when placed."""


@dataclass(frozen=True)
class JobReport:
    """One job: started or not, its pods, and check's prediction."""

    kind: str
    namespace: str
    name: str
    started: bool
    expected_pods: int
    pods: tuple[PodReport, ...]
    why: str
    """Why it did not start (empty when it did)."""
    check_fits: bool
    check_findings: tuple[str, ...] = ()
    """``code: message`` of each error check reported on the job."""
    differs: str = ""
    """How the scheduler's verdict differs from check's (empty when they agree)."""


@dataclass(frozen=True)
class SimulationReport:
    """Everything ``simulate`` found."""

    stack: str
    nodes: tuple[str, ...]
    jobs: tuple[JobReport, ...]
    not_applied: tuple[str, ...] = ()
    """Objects the API server refused, with its message."""
    notes: tuple[str, ...] = field(default=())
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(j.started for j in self.jobs)

    def json(self) -> str:
        doc = asdict(self)
        doc["ok"] = self.ok
        return json.dumps(doc, indent=2, sort_keys=True)


def _check_prediction(stack: Any) -> list[Finding]:
    """check's errors (none when it accepts the stack)."""
    from trainjobs.check import run

    try:
        run(stack)
    except SpecError as exc:
        return [f for f in exc.findings if f.severity is Severity.ERROR]
    return []


def simulate(
    stack_file: str | Path,
    *,
    seconds: float = DEFAULT_SECONDS,
    progress: TextIO | None = None,
    workdir: Path | None = None,
) -> SimulationReport:
    """Run the stack's jobs on a throwaway sandbox (see the module doc).

    SpecError when the stack cannot be rendered at all (a spec error, not a fit);
    :class:`~trainjobs.sandbox.binaries.MissingBinaries` or
    :class:`~trainjobs.sandbox.programs.StartupError` when the sandbox cannot start.
    """
    from trainjobs.render import render
    from trainjobs.spec import load_path

    began = time.monotonic()
    stack = load_path(stack_file)
    predicted = _check_prediction(stack)
    rendering = render(stack)
    pools = [p.resource for p in stack.platform if isinstance(p.resource, GpuNodePool)]
    nodes = [n for pool in pools for n in pool_nodes(pool)] if pools else default_nodes()
    bins = binaries(progress=progress) if progress is not None else binaries()
    with tempfile.TemporaryDirectory(prefix="trainjobs-simulate-", dir=workdir) as tmp:
        plane = ControlPlane(
            Path(tmp), bins=bins, context="trainjobs-simulate", mpi_operator="if-port-free"
        )
        try:
            if progress is not None:
                print("starting a throwaway sandbox", file=progress, flush=True)
            plane.start()
            for node in nodes:
                plane.client.create("/api/v1/nodes", node)
            manifests = [dict(o.manifest) for o in rendering.objects]
            refused = _apply(plane, manifests)
            jobs = rendering.jobs
            expected = {
                (j.plan.namespace, j.plan.name): sum(ps.replicas for ps in j.plan.pod_sets)
                for j in jobs
            }
            namespaces = sorted({ns for ns, _ in expected})
            if progress is not None:
                print(
                    f"letting the scheduler act (up to {seconds:.0f}s)", file=progress, flush=True
                )
            pods = _settle(plane, namespaces, sum(expected.values()), seconds)
        finally:
            plane.stop()
        notes = tuple(plane.notes)
    reports = tuple(
        _job_report(j, pods, predicted, expected[(j.plan.namespace, j.plan.name)]) for j in jobs
    )
    return SimulationReport(
        stack=str(stack_file),
        nodes=tuple(n["metadata"]["name"] for n in nodes),
        jobs=reports,
        not_applied=tuple(refused),
        notes=notes,
        seconds=round(time.monotonic() - began, 1),
    )


def _apply(plane: ControlPlane, manifests: Sequence[Mapping[str, Any]]) -> list[str]:
    """Server-side apply every object (their namespaces first when the stack does not
    create them: on a real cluster they exist already). What the API server refused."""
    for namespace in sorted({m["metadata"].get("namespace") for m in manifests} - {None}):
        plane.ensure_namespace(str(namespace))
    stream = yaml.safe_dump_all(manifests, sort_keys=False)
    # An operator's webhook may answer 404 for a moment after its server is ready (seen
    # with the Training Operator on a busy machine): server-side apply is idempotent, so
    # what the webhook refused is applied again, a few times.
    for attempt in range(WEBHOOK_ATTEMPTS):
        result = plane.kubectl(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=trainjobs-simulate",
            "-f",
            "-",
            stdin=stream,
            check=False,
        )
        refused = [line for line in result.stderr.splitlines() if line.strip()]
        if result.returncode == 0 or not any("failed calling webhook" in r for r in refused):
            break
        if attempt + 1 < WEBHOOK_ATTEMPTS:
            time.sleep(2)
    return refused


def _job_pods(
    pods: Sequence[Mapping[str, Any]], namespace: str, name: str, own: set[str]
) -> list[Mapping[str, Any]]:
    found = []
    for pod in pods:
        meta = pod["metadata"]
        if meta.get("namespace") != namespace:
            continue
        labels = meta.get("labels") or {}
        if meta["name"] in own or any(labels.get(key) == name for key in JOB_LABELS):
            found.append(pod)
    return found


def _scheduled_message(pod: Mapping[str, Any]) -> tuple[str, str]:
    """(reason, message) of the pod's PodScheduled condition."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return str(c.get("reason") or ""), str(c.get("message") or "")
    return "", ""


def _settle(
    plane: ControlPlane, namespaces: Sequence[str], expected: int, seconds: float
) -> list[dict[str, Any]]:
    """The pods once each is bound or marked Unschedulable and the count reached what
    the jobs need (or held still for 5 s: an operator may make fewer); at the deadline,
    what there is."""
    deadline = time.monotonic() + seconds
    still_since = time.monotonic()
    last = -1
    while True:
        pods: list[dict[str, Any]] = []
        for namespace in namespaces:
            pods += plane.client.items(f"/api/v1/namespaces/{namespace}/pods")
        settled = all(
            (p.get("spec") or {}).get("nodeName") or _scheduled_message(p)[0] == "Unschedulable"
            for p in pods
        )
        if len(pods) != last:
            last, still_since = len(pods), time.monotonic()
        enough = len(pods) >= expected or time.monotonic() - still_since > 5
        if (pods and settled and enough) or time.monotonic() > deadline:
            return pods
        time.sleep(0.5)


def _job_report(
    job: RenderedJob,
    pods: Sequence[Mapping[str, Any]],
    predicted: Sequence[Finding],
    expected: int,
) -> JobReport:
    plan = job.plan
    own = {o.manifest["metadata"]["name"] for o in job.objects if o.manifest.get("kind") == "Pod"}
    mine = sorted(
        _job_pods(pods, plan.namespace, plan.name, own), key=lambda p: p["metadata"]["name"]
    )
    reports = []
    for pod in mine:
        node = (pod.get("spec") or {}).get("nodeName")
        _, message = _scheduled_message(pod)
        phase = (pod.get("status") or {}).get("phase") or "Pending"
        reports.append(PodReport(pod["metadata"]["name"], node, phase, "" if node else message))
    placed = [r for r in reports if r.node]
    if not reports:
        why = f"no pod was made (the {job.kind}'s operator made none in the time given)"
    elif len(placed) < expected:
        why = (
            f"{len(placed)} of {expected} pods placed; the job starts only when every pod runs"
            if placed
            else f"none of its {expected} pods placed"
        )
    else:
        why = ""
    started = not why
    errors = [f for f in predicted if f.path == job.origin or f.path.startswith(job.origin + ".")]
    check_fits = not errors
    differs = ""
    if check_fits and not started:
        differs = "check predicted it fits; the scheduler did not place it"
    elif not check_fits and started:
        differs = "check refuses it; the scheduler placed every pod"
    return JobReport(
        kind=job.kind,
        namespace=plan.namespace,
        name=plan.name,
        started=started,
        expected_pods=expected,
        pods=tuple(reports),
        why=why,
        check_fits=check_fits,
        check_findings=tuple(f"{f.code}: {f.message}" for f in errors),
        differs=differs,
    )


def write_report(report: SimulationReport, out: TextIO) -> None:
    """The report for people: per job a verdict line, then its pods."""
    print(
        f"simulated {report.stack} on {len(report.nodes)} kwok nodes in {report.seconds:.0f}s",
        file=out,
    )
    for job in report.jobs:
        verdict = "started" if job.started else f"WOULD NOT START: {job.why}"
        print(f"\n{job.kind} {job.namespace}/{job.name}: {verdict}", file=out)
        for pod in job.pods:
            where = f"on {pod.node} ({pod.phase})" if pod.node else f"Pending: {pod.reason}"
            print(f"  {pod.name}: {where}", file=out)
        check = "fits" if job.check_fits else "refuses: " + "; ".join(job.check_findings)
        print(f"  check {check}", file=out)
        if job.differs:
            print(f"  DIFFERS: {job.differs}", file=out)
    for line in report.not_applied:
        print(f"not applied: {line}", file=out)
    for note in report.notes:
        print(f"note: {note}", file=out)
    started = sum(j.started for j in report.jobs)
    print(f"\n{started} of {len(report.jobs)} jobs would start", file=out)
