"""``trainjobs simulate``: a stack's jobs on a throwaway sandbox shaped like its node pools.

A control plane of the real programs starts in a temporary folder (its programs die
with this process), with kwok nodes made from the stack's GpuNodePools
(:mod:`trainjobs.sandbox.nodes`). The stack's objects — what ``trainjobs render`` makes
and ``pulumi up`` registers, also when ``check`` refuses them — are applied with the real
kubectl (server-side apply); the real kube-scheduler and operators then act for a
bounded time. Per job the report says whether it started (every pod it needs bound to a
node), each pod's node or the reason the scheduler wrote on it, and where this differs
from what ``check`` predicted.

The operators that run are the stack's own installs where it declares them, else the
built-in ones (:mod:`trainjobs.sandbox.operators`). When the stack declares queues
(GpuQueue: Kueue's ClusterQueue, LocalQueue and ResourceFlavor) and Kueue is built, Kueue
runs too and the report says per queued job whether Kueue admitted it, or Kueue's reason
for holding it. No gang scheduler (Volcano, scheduler-plugins) is built for the sandbox:
pods that name one stay unplaced and the report says the gang is not enforced; the
default scheduler places what fits of a gang, and a job with only some pods placed is
reported as not started, since its training cannot begin until every worker runs.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml

from trainjobs.errors import Finding, Severity, SpecError
from trainjobs.plan.admission import QUEUE_LABEL
from trainjobs.platform.pools.spec import GpuNodePool
from trainjobs.sandbox.api import ApiError
from trainjobs.sandbox.binaries import MissingBinaries, binaries
from trainjobs.sandbox.control_plane import ControlPlane
from trainjobs.sandbox.kueue import Kueue, KueueUnavailable, kueue_bin_dir
from trainjobs.sandbox.nodes import default_nodes, pool_nodes
from trainjobs.sandbox.operators import operators_from
from trainjobs.sandbox.programs import StartupError, wait_for

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
KUEUE_KINDS = ("ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Cohort")
"""Kueue's own objects: applied (and the ClusterQueues active) before the jobs."""
KUEUE_API = "/apis/kueue.x-k8s.io/v1beta2"
DEFAULT_SCHEDULER = "default-scheduler"
QUEUES_ACTIVE = 60.0
PODGROUPS = (
    "/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups",
    "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups",
)
"""Volcano's and scheduler-plugins' PodGroups: a gang, made by trainjobs (pods target) or
by the operator (``gangScheduler``). Neither gang scheduler runs in the sandbox."""
"""Seconds to wait for the stack's ClusterQueues to become active."""


@dataclass(frozen=True)
class PodReport:
    """One pod: the node it was bound to, or why the scheduler left it Pending."""

    name: str
    node: str | None
    phase: str
    reason: str = ""
    """The scheduler's message on the PodScheduled condition (``0/2 nodes are available:
    2 Insufficient nvidia.com/gpu.``), or why nothing schedules it (a gang scheduler the
    sandbox does not run); empty when placed."""


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
    queue: str = ""
    """The LocalQueue the job names (``kueue.x-k8s.io/queue-name``); empty: none."""
    admitted: bool | None = None
    """Whether Kueue admitted every Workload of the job; None: no queue, or Kueue did
    not run (see ``admission``)."""
    admission: str = ""
    """Kueue's word: ``admitted by ClusterQueue team-a``, or its reason for holding the
    job (the Workload's QuotaReserved message); or why Kueue did not run."""
    gang: str = ""
    """The job's PodGroup, which no gang scheduler enforces here (empty: none)."""


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
    operators: tuple[str, ...] = ()
    """The operator programs that ran: where, and whose install (the stack's or built-in)."""

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
    operators = operators_from(stack.platform, rendering)
    manifests = [
        dict(o.manifest)
        for o in rendering.objects
        # Registered by the sandbox itself, by URL: no Service routes to loopback.
        if not (
            str(o.manifest.get("kind", "")).endswith("WebhookConfiguration")
            and o.manifest["metadata"]["name"] in operators.webhook_names
        )
    ]
    queued = any(m["kind"] in KUEUE_KINDS for m in manifests)
    bins = binaries(progress=progress) if progress is not None else binaries()
    notes = [*operators.notes]
    with tempfile.TemporaryDirectory(prefix="trainjobs-simulate-", dir=workdir) as tmp:
        plane = ControlPlane(
            Path(tmp),
            bins=bins,
            context="trainjobs-simulate",
            mpi_operator="if-port-free",
            operators=operators,
        )
        try:
            _say(progress, "starting a throwaway sandbox")
            plane.start()
            for node in nodes:
                plane.client.create("/api/v1/nodes", node)
            kueue_off = _start_kueue(plane, progress) if queued else ""
            if kueue_off:
                notes.append(kueue_off)
            refused = _apply(plane, manifests, kueue=queued and not kueue_off)
            jobs = [_Job.of(j) for j in rendering.jobs]
            _say(progress, f"letting the scheduler act (up to {seconds:.0f}s)")
            pods, workloads, groups = _settle(plane, jobs, seconds, kueue=queued and not kueue_off)
        finally:
            plane.stop()
        notes += plane.notes
        running = {p.name for p in plane.programs}
    reports = tuple(_job_report(j, pods, workloads, groups, predicted, kueue_off) for j in jobs)
    return SimulationReport(
        stack=str(stack_file),
        nodes=tuple(n["metadata"]["name"] for n in nodes),
        jobs=reports,
        not_applied=tuple(refused),
        notes=tuple(notes),
        operators=tuple(operators.described(running)),
        seconds=round(time.monotonic() - began, 1),
    )


def _say(progress: TextIO | None, text: str) -> None:
    if progress is not None:
        print(text, file=progress, flush=True)


def _start_kueue(plane: ControlPlane, progress: TextIO | None) -> str:
    """Start Kueue on the sandbox; "" when it runs, else why not (queues not enforced)."""
    try:
        manager = Kueue(plane, bin_dir=kueue_bin_dir(build=False))
    except MissingBinaries as exc:
        return f"Kueue did not run, so the stack's queues are not enforced: {exc}"
    _say(progress, "starting Kueue (the stack declares queues)")
    try:
        manager.start()
    except (KueueUnavailable, StartupError) as exc:
        manager.stop()  # its webhooks (failurePolicy Fail) must not outlive it
        return f"Kueue did not run, so the stack's queues are not enforced: {exc}"
    return ""


def _apply(
    plane: ControlPlane, manifests: Sequence[Mapping[str, Any]], *, kueue: bool = False
) -> list[str]:
    """Server-side apply every object (their namespaces first when the stack does not
    create them: on a real cluster they exist already). With ``kueue``, its queues first,
    and the jobs once the ClusterQueues are active. What the API server refused."""
    for namespace in sorted({m["metadata"].get("namespace") for m in manifests} - {None}):
        plane.ensure_namespace(str(namespace))
    refused: list[str] = []
    if kueue:
        queues = [m for m in manifests if m["kind"] in KUEUE_KINDS]
        manifests = [m for m in manifests if m["kind"] not in KUEUE_KINDS]
        refused += _kubectl_apply(plane, queues)
        names = [q["metadata"]["name"] for q in queues if q["kind"] == "ClusterQueue"]
        with contextlib.suppress(StartupError):  # an inactive queue's jobs stay held: reported
            wait_for(
                "the stack's ClusterQueues active",
                lambda: all(_queue_active(plane, n) for n in names),
                QUEUES_ACTIVE,
                every=0.5,
            )
    return refused + _kubectl_apply(plane, manifests)


def _queue_active(plane: ControlPlane, name: str) -> bool:
    queue = plane.client.get(f"{KUEUE_API}/clusterqueues/{name}") or {}
    return _condition(queue, "Active").get("status") == "True"


def _kubectl_apply(plane: ControlPlane, manifests: Sequence[Mapping[str, Any]]) -> list[str]:
    if not manifests:
        return []
    stream = yaml.safe_dump_all([dict(m) for m in manifests], sort_keys=False)
    # An operator's webhook may answer 404 for a moment after its server is ready (seen
    # with the Training Operator on a busy machine): server-side apply is idempotent, so
    # what the webhook refused is applied again, a few times.
    refused: list[str] = []
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


def _condition(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return {}


@dataclass(frozen=True)
class _Job:
    """What the report needs of a rendered job: its names, pods and queue."""

    rendered: RenderedJob
    namespace: str
    name: str
    expected: int
    """Pods it needs at once (every replica of every pod set)."""
    names: frozenset[str]
    """Names of the objects the stack makes for it (Kueue's Workloads point at them)."""
    own_pods: frozenset[str]
    queue: str

    @classmethod
    def of(cls, job: RenderedJob) -> _Job:
        manifests = [o.manifest for o in job.objects]
        queues = [
            ((m.get("metadata") or {}).get("labels") or {}).get(QUEUE_LABEL) for m in manifests
        ]
        return cls(
            job,
            job.plan.namespace,
            job.plan.name,
            sum(ps.replicas for ps in job.plan.pod_sets),
            frozenset(m["metadata"]["name"] for m in manifests),
            frozenset(m["metadata"]["name"] for m in manifests if m.get("kind") == "Pod"),
            next((str(q) for q in queues if q), ""),
        )

    def pods(self, pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        return sorted(
            _job_pods(pods, self.namespace, self.name, set(self.own_pods)),
            key=lambda p: p["metadata"]["name"],
        )

    def owned(self, objects: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The objects owned by the job's own objects (Kueue's Workloads, PodGroups), or
        that the stack makes for the job (a pods-target PodGroup)."""
        return [
            w
            for w in objects
            if w["metadata"].get("namespace") == self.namespace
            and (
                w["metadata"].get("name") in self.names
                or any(
                    o.get("name") in self.names or o.get("name") == self.name
                    for o in w["metadata"].get("ownerReferences") or []
                )
            )
        ]


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
    c = _condition(pod, "PodScheduled")
    return str(c.get("reason") or ""), str(c.get("message") or "")


def _foreign_scheduler(pod: Mapping[str, Any]) -> str:
    """The scheduler the pod names when it is not the default one ("" otherwise)."""
    name = (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER
    return "" if name == DEFAULT_SCHEDULER else str(name)


def _pod_settled(pod: Mapping[str, Any]) -> bool:
    """Bound and run by its kwok node (its phase past Pending), refused by the scheduler,
    or naming a scheduler that does not run here. A bound pod is not settled until kwok
    has answered for it: on a busy machine the binding and the node's first status are
    seconds apart, and the report would show a placed pod as Pending."""
    if (pod.get("spec") or {}).get("nodeName"):
        return ((pod.get("status") or {}).get("phase") or "Pending") != "Pending"
    return bool(_scheduled_message(pod)[0] == "Unschedulable" or _foreign_scheduler(pod))


def _held(workloads: Sequence[Mapping[str, Any]]) -> str:
    """Kueue's reason for holding a job ("" when it holds none of its Workloads)."""
    for w in workloads:
        reserved = _condition(w, "QuotaReserved")
        if reserved.get("status") == "False" and reserved.get("message"):
            return str(reserved["message"])
    return ""


def _admitted(workloads: Sequence[Mapping[str, Any]]) -> bool:
    return bool(workloads) and all(
        _condition(w, "Admitted").get("status") == "True" for w in workloads
    )


def _list(
    plane: ControlPlane, namespaces: Sequence[str], path: str, *, missing_ok: bool = False
) -> list[dict[str, Any]]:
    """The items of ``path`` in each namespace; with ``missing_ok`` none where the API
    server does not serve the kind (its CRD is not installed)."""
    found: list[dict[str, Any]] = []
    for namespace in namespaces:
        listed = plane.client.request("GET", path.format(namespace=namespace), ok=(404,))
        if listed.get("_status") == 404 and not missing_ok:
            raise ApiError("GET", path, 404, listed)
        found += listed.get("items") or []
    return found


def _settle(
    plane: ControlPlane, jobs: Sequence[_Job], seconds: float, *, kueue: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(pods, Kueue's Workloads, PodGroups) once every job is settled: held by Kueue with
    a reason, or each of its pods settled (:func:`_pod_settled`) and their count what the
    job needs (or held still for 5 s: an operator may make fewer, or, waiting for a gang
    scheduler, none); at the deadline, what there is."""
    namespaces = sorted({j.namespace for j in jobs})
    deadline = time.monotonic() + seconds
    still_since = time.monotonic()
    last = -1
    while True:
        pods = _list(plane, namespaces, "/api/v1/namespaces/{namespace}/pods")
        workloads = (
            _list(plane, namespaces, KUEUE_API + "/namespaces/{namespace}/workloads")
            if kueue
            else []
        )
        groups = [g for path in PODGROUPS for g in _list(plane, namespaces, path, missing_ok=True)]
        if len(pods) != last:
            last, still_since = len(pods), time.monotonic()
        still = time.monotonic() - still_since > 5
        settled = all(
            _job_settled(j, pods, workloads, groups, kueue=kueue, still=still) for j in jobs
        )
        if settled or time.monotonic() > deadline:
            return pods, workloads, groups
        time.sleep(0.5)


def _job_settled(
    job: _Job,
    pods: Sequence[Mapping[str, Any]],
    workloads: Sequence[Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    *,
    kueue: bool,
    still: bool,
) -> bool:
    """Held by Kueue with a reason, or its pods made and each settled, or a gang whose
    operator makes no pod without its gang scheduler."""
    if kueue and job.queue:
        mine = job.owned(workloads)
        if not _admitted(mine):
            return bool(_held(mine))
    found = job.pods(pods)
    if not found and still and job.owned(groups):
        return True
    enough = len(found) >= job.expected or (still and bool(found))
    return enough and all(_pod_settled(p) for p in found)


def _pod_report(pod: Mapping[str, Any]) -> PodReport:
    node = (pod.get("spec") or {}).get("nodeName")
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    _, message = _scheduled_message(pod)
    foreign = _foreign_scheduler(pod)
    if not node and foreign and not message:
        message = (
            f"its scheduler {foreign!r} does not run in the sandbox (no gang scheduler is "
            "built): the gang is not enforced and nothing places the pod"
        )
    return PodReport(pod["metadata"]["name"], node, phase, "" if node else message)


def _admission(
    job: _Job, workloads: Sequence[Mapping[str, Any]], kueue_off: str
) -> tuple[bool | None, str]:
    """(admitted, Kueue's word) of a queued job."""
    if not job.queue:
        return None, ""
    if kueue_off:
        return None, "not enforced: Kueue did not run (see the notes)"
    mine = job.owned(workloads)
    if _admitted(mine):
        queues = sorted(
            {str((w["status"].get("admission") or {}).get("clusterQueue")) for w in mine}
        )
        return True, f"admitted by ClusterQueue {', '.join(queues)}"
    held = _held(mine)
    if held:
        return False, held
    return False, "no Workload admitted in the time given" if mine else "no Workload was made"


def _job_report(
    job: _Job,
    pods: Sequence[Mapping[str, Any]],
    workloads: Sequence[Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    predicted: Sequence[Finding],
    kueue_off: str = "",
) -> JobReport:
    reports = [_pod_report(p) for p in job.pods(pods)]
    gang = _gang(job.owned(groups))
    placed = [r for r in reports if r.node]
    expected = job.expected
    admitted, admission = _admission(job, workloads, kueue_off)
    if admitted is False:
        why = f"Kueue did not admit it: {admission}"
    elif not reports and gang:
        why = (
            f"no pod was made: the operator makes them once a gang scheduler admits the "
            f"job's {gang}"
        )
    elif not reports:
        why = f"no pod was made (the {job.rendered.kind}'s operator made none in the time given)"
    elif len(placed) < expected:
        why = (
            f"{len(placed)} of {expected} pods placed; the job starts only when every pod runs"
            if placed
            else f"none of its {expected} pods placed"
        )
    else:
        why = ""
    started = not why
    origin = job.rendered.origin
    errors = [f for f in predicted if f.path == origin or f.path.startswith(origin + ".")]
    check_fits = not errors
    differs = ""
    if check_fits and not started:
        who = (
            "Kueue did not admit it"
            if admitted is False
            else "the operator made no pod"
            if not reports
            else "the scheduler did not place it"
        )
        differs = f"check predicted it fits; {who}"
    elif not check_fits and started:
        differs = "check refuses it; the scheduler placed every pod"
    return JobReport(
        kind=job.rendered.kind,
        namespace=job.namespace,
        name=job.name,
        started=started,
        expected_pods=expected,
        pods=tuple(reports),
        why=why,
        check_fits=check_fits,
        check_findings=tuple(f"{f.code}: {f.message}" for f in errors),
        differs=differs,
        queue=job.queue,
        admitted=admitted,
        admission=admission,
        gang=gang,
    )


def _gang(groups: Sequence[Mapping[str, Any]]) -> str:
    """The job's PodGroup, said as not enforced ("" when it has none)."""
    if not groups:
        return ""
    group = groups[0]
    api_group = str(group.get("apiVersion", "")).split("/")[0]
    phase = (group.get("status") or {}).get("phase") or "none"
    minimum = (group.get("spec") or {}).get("minMember")
    return (
        f"PodGroup {group['metadata']['name']} ({api_group}, minMember {minimum}, phase "
        f"{phase}); no gang scheduler is built for the sandbox, so the gang is not enforced"
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
        if job.queue:
            print(f"  queue {job.queue}: {job.admission}", file=out)
        if job.gang:
            print(f"  gang: {job.gang}", file=out)
        for pod in job.pods:
            where = f"on {pod.node} ({pod.phase})" if pod.node else f"Pending: {pod.reason}"
            print(f"  {pod.name}: {where}", file=out)
        check = "fits" if job.check_fits else "refuses: " + "; ".join(job.check_findings)
        print(f"  check {check}", file=out)
        if job.differs:
            print(f"  DIFFERS: {job.differs}", file=out)
    for line in report.operators:
        print(f"operator: {line}", file=out)
    for line in report.not_applied:
        print(f"not applied: {line}", file=out)
    for note in report.notes:
        print(f"note: {note}", file=out)
    started = sum(j.started for j in report.jobs)
    print(f"\n{started} of {len(report.jobs)} jobs would start", file=out)
