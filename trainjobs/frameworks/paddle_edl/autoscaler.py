"""The EDL autoscaler's decision as a pure function: cluster figures + jobs → trainer counts.

A port of one round of the TPR controller's autoscaler (seed-systems.md §3.5,
[EDL pkg/autoscaler.go]), step for step:

1. a job is *pending* when all its trainer pods are Pending (no pods counts too);
2. the jobs considered are those whose trainer pods all run — or every job, when
   one is pending (room may have to be made for it);
3. only elastic jobs (min-instance < max-instance) are planned, least fulfilled first
   (``(parallelism - min) / (max - min)``), ties broken by GPU limit, CPU request,
   memory request, ascending;
4. dry runs repeat until a whole pass changes nothing: each pass scales up
   (at most +1 per job, in that order) while memory, a node with room, CPU under
   ``max_load`` and, for GPU jobs, free GPUs allow, then scales down (most fulfilled
   first) jobs above max-instance, or above min-instance while requested CPU or GPU
   limits exceed ``max_load`` of the cluster;
5. the target of every planned job is its current parallelism plus its change.

Kept as upstream had it: the trainer Job's *cached* parallelism, requests summed
over init containers too, the ``int(total * max_load)`` truncation. Changed, each
documented: a planned trainer's requests are *taken from* the chosen node's free
figures (the TPR controller added them — a sign error the CRD variant fixed — so
it could plan trainers onto a full node, where they stayed Pending); jobs are keyed
``namespace/name`` (upstream keyed by name, so equal names collided); equal jobs
keep namespace/name order and nodes are searched in name order (upstream used Go
map order). Upstream looped forever when the passes undid each other (e.g. a GPU
job scaled up to the last free GPU, which pushes the GPU limits over ``max_load``);
here the dry run stops when a pass ends where an earlier one ended, and the plan
says so (``ScalePlan.oscillating``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from trainjobs.frameworks.paddle_edl.quantities import ceil_int, mega, milli

__all__ = [
    "ClusterResource",
    "ElasticJob",
    "Figures",
    "JobDecision",
    "NodeRoom",
    "ScalePlan",
    "TrainerDemand",
    "TrainerPods",
    "plan",
    "scale_all_dry_run",
    "scale_dry_run",
    "sorted_jobs",
]


@dataclass(frozen=True)
class NodeRoom:
    """What one node has left: CPU in millicores, memory in megabytes (10^6)."""

    cpu_idle_milli: int
    memory_free_mega: int


@dataclass(frozen=True)
class ClusterResource:
    """The cluster as the autoscaler sees it (upstream ``ClusterResource``).

    Totals are allocatable capacity; requests and limits are summed over every pod
    that has not finished. CPU in millicores, memory in megabytes, GPUs whole.
    """

    cpu_total_milli: int = 0
    memory_total_mega: int = 0
    gpu_total: int = 0
    cpu_request_milli: int = 0
    cpu_limit_milli: int = 0
    memory_request_mega: int = 0
    memory_limit_mega: int = 0
    gpu_request: int = 0
    gpu_limit: int = 0
    nodes: Mapping[str, NodeRoom] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainerDemand:
    """One trainer pod's resources, exact (cores, bytes, GPUs) as the job spec gives them."""

    cpu_request: Fraction = Fraction(0)
    memory_request: Fraction = Fraction(0)
    gpu_limit: Fraction = Fraction(0)

    @property
    def cpu_milli(self) -> int:
        return milli(self.cpu_request)

    @property
    def memory_mega(self) -> int:
        return mega(self.memory_request)

    @property
    def gpus(self) -> int:
        return ceil_int(self.gpu_limit)


@dataclass(frozen=True)
class TrainerPods:
    """A job's trainer pods by phase (``paddle-job=<name>``; terminating ones only in total)."""

    total: int = 0
    running: int = 0
    pending: int = 0


@dataclass(frozen=True)
class ElasticJob:
    """One TrainingJob as the autoscaler sees it."""

    key: str
    """``namespace/name``."""
    min_instance: int
    max_instance: int
    parallelism: int
    """The trainer Job's current ``spec.parallelism``."""
    trainer: TrainerDemand = field(default_factory=TrainerDemand)
    pods: TrainerPods = field(default_factory=TrainerPods)

    @property
    def elastic(self) -> bool:
        return self.min_instance < self.max_instance

    @property
    def fulfillment(self) -> float:
        """How far from min-instance (0) to max-instance (1) the job runs."""
        if self.min_instance == self.max_instance:
            return 1.0
        spread = self.max_instance - self.min_instance
        return float(self.parallelism - self.min_instance) / float(spread)


def sorted_jobs(jobs: Sequence[ElasticJob]) -> list[ElasticJob]:
    """The elastic jobs, least fulfilled first; ties by GPU, CPU, memory, then key."""
    elastic = [j for j in jobs if j.elastic]
    return sorted(
        elastic,
        key=lambda j: (
            j.fulfillment,
            j.trainer.gpu_limit,
            j.trainer.cpu_request,
            j.trainer.memory_request,
            j.key,
        ),
    )


@dataclass
class Figures:
    """The working copy of the cluster figures a dry run changes as it plans.

    Nodes are kept in name order, the order the node search walks them.
    """

    cpu_total: int
    memory_total: int
    gpu_total: int
    cpu_requested: int
    memory_requested: int
    gpu_limited: int
    cpu_idle: dict[str, int]
    memory_free: dict[str, int]

    @classmethod
    def of(cls, cluster: ClusterResource) -> Figures:
        names = sorted(cluster.nodes)
        return cls(
            cluster.cpu_total_milli,
            cluster.memory_total_mega,
            cluster.gpu_total,
            cluster.cpu_request_milli,
            cluster.memory_request_mega,
            cluster.gpu_limit,
            {n: cluster.nodes[n].cpu_idle_milli for n in names},
            {n: cluster.nodes[n].memory_free_mega for n in names},
        )


def _assignable_node(figures: Figures, trainer: TrainerDemand) -> str:
    for name, idle in figures.cpu_idle.items():
        if trainer.cpu_milli <= idle and trainer.memory_mega <= figures.memory_free[name]:
            return name
    return ""


def scale_dry_run(
    figures: Figures, job: ElasticJob, current_diff: int, max_load: float, scale_down: bool
) -> int:
    """The change (-1, 0, +1, or down to max-instance) for one job; updates ``figures``."""
    trainer = job.trainer
    node = ""
    change = 0
    planned = job.parallelism + current_diff
    if scale_down:
        if planned > job.max_instance:
            change = -1
        else:
            gpu_over = figures.gpu_limited > int(float(figures.gpu_total) * max_load)
            cpu_over = figures.cpu_requested > int(float(figures.cpu_total) * max_load)
            if (gpu_over or cpu_over) and planned > job.min_instance:
                change = -1
    elif planned >= job.max_instance:
        change = job.max_instance - planned
    elif figures.memory_total - figures.memory_requested <= trainer.memory_mega:
        change = 0
    else:
        node = _assignable_node(figures, trainer)
        if node:
            cpu_room = int(float(figures.cpu_total) * max_load) - figures.cpu_requested
            cpu_ok = 1 if cpu_room >= trainer.cpu_milli else 0
            if trainer.gpus > 0:
                gpu_ok = 1 if figures.gpu_total - figures.gpu_limited >= trainer.gpus else 0
                change = min(gpu_ok, cpu_ok)
            else:
                change = cpu_ok
    figures.gpu_limited += trainer.gpus * change
    figures.cpu_requested += trainer.cpu_milli * change
    figures.memory_requested += trainer.memory_mega * change
    if node:
        # The TPR controller added here (see the module docstring).
        figures.cpu_idle[node] -= trainer.cpu_milli * change
        figures.memory_free[node] -= trainer.memory_mega * change
    return change


def scale_all_dry_run(
    jobs: Sequence[ElasticJob], cluster: ClusterResource, max_load: float
) -> tuple[dict[str, int], bool]:
    """The change per elastic job, and whether the passes oscillated (upstream: forever)."""
    figures = Figures.of(cluster)
    ordered = sorted_jobs(jobs)
    diff = {job.key: 0 for job in ordered}
    # A pass that changed something yet ends where an earlier pass ended is a cycle: the
    # TPR controller, whose node figures only grew, repeated it forever.
    seen: set[tuple[tuple[str, int], ...]] = set()
    while True:
        changed = False
        for job in ordered:
            change = scale_dry_run(figures, job, diff[job.key], max_load, scale_down=False)
            diff[job.key] += change
            changed = changed or change != 0
        for job in reversed(ordered):
            change = scale_dry_run(figures, job, diff[job.key], max_load, scale_down=True)
            diff[job.key] += change
            changed = changed or change != 0
        if not changed:
            return diff, False
        state = tuple(diff.items())
        if state in seen:
            return diff, True
        seen.add(state)


@dataclass(frozen=True)
class JobDecision:
    """What the autoscaler does with one job.

    ``target`` is None when the job is left alone; ``reason`` then says why.
    """

    job: ElasticJob
    target: int | None
    reason: str = ""

    @property
    def change(self) -> int:
        return 0 if self.target is None else self.target - self.job.parallelism


@dataclass(frozen=True)
class ScalePlan:
    """One autoscaler round: a decision per job, in input order."""

    decisions: tuple[JobDecision, ...]
    max_load: float
    have_pending: bool = False
    oscillating: bool = False

    def targets(self) -> dict[str, int]:
        """``namespace/name`` → the trainer parallelism the autoscaler would set."""
        return {d.job.key: d.target for d in self.decisions if d.target is not None}


def plan(cluster: ClusterResource, jobs: Sequence[ElasticJob], max_load: float) -> ScalePlan:
    """One round of the EDL autoscaler over ``jobs`` on ``cluster``."""
    have_pending = any(j.pods.total == j.pods.pending for j in jobs)
    candidates = [j for j in jobs if j.pods.total == j.pods.running or have_pending]
    diff, oscillating = scale_all_dry_run(candidates, cluster, max_load)
    decisions = []
    for job in jobs:
        if not job.elastic:
            reason = "not elastic: max-instance is not above min-instance"
            decisions.append(JobDecision(job, None, reason))
        elif job.key not in diff:
            reason = "left alone: its trainers are not all Running and no job is pending"
            decisions.append(JobDecision(job, None, reason))
        else:
            decisions.append(JobDecision(job, job.parallelism + diff[job.key]))
    return ScalePlan(tuple(decisions), max_load, have_pending, oscillating)
