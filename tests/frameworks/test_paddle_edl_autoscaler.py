"""The EDL autoscaler: every case of upstream's autoscaler_internal_test.go, and properties.

Each upstream test is ported with its figures unchanged ([EDL pkg/autoscaler_internal_test.go];
the reference, seed-systems.md §3.5, lists most of them). Go's tests call the dry run
repeatedly on one cluster value, which each call changes; ``Figures`` is that value here.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from trainjobs.frameworks.paddle_edl.autoscaler import (
    ClusterResource,
    ElasticJob,
    Figures,
    NodeRoom,
    TrainerDemand,
    TrainerPods,
    plan,
    scale_all_dry_run,
    scale_dry_run,
    sorted_jobs,
)
from trainjobs.frameworks.paddle_edl.quantities import quantity

ALL_IDLE = {"node0": NodeRoom(99999, 99999)}


def make_job(
    name: str, cpu_req: str, memory_req: str, gpu_limit: str, low: int, high: int, current: int
) -> ElasticJob:
    """upstream ``makeJob`` (its CPU and memory limits are never read, so not taken)."""
    demand = TrainerDemand(quantity(cpu_req), quantity(memory_req), quantity(gpu_limit))
    return ElasticJob(name, low, high, current, demand)


def test_trainer_request_limit() -> None:
    job = make_job("name", "1k", "100Mi", "10", 1, 1, 1)
    assert (job.trainer.cpu_milli, job.trainer.memory_mega, job.trainer.gpus) == (
        1_000_000,
        105,
        10,
    )


def test_scale_dry_run_satisfied() -> None:
    figures = Figures.of(ClusterResource(cpu_total_milli=2000, memory_total_mega=1000))
    job = make_job("name", "1000Mi", "100Mi", "0", 1, 2, 2)
    assert scale_dry_run(figures, job, 0, 1.0, scale_down=False) == 0


def _cluster(
    cpu: tuple[int, int], memory: tuple[int, int], gpu: tuple[int, int], nodes: bool = True
) -> Figures:
    """(total, requested) CPU millicores and memory megabytes, (total, limits) GPUs."""
    return Figures.of(
        ClusterResource(
            cpu_total_milli=cpu[0],
            cpu_request_milli=cpu[1],
            memory_total_mega=memory[0],
            memory_request_mega=memory[1],
            gpu_total=gpu[0],
            gpu_limit=gpu[1],
            nodes=ALL_IDLE if nodes else {},
        )
    )


def test_scale_dry_run_more_cpu() -> None:
    figures = _cluster((3000, 100), (1000, 100), (0, 0))
    assert scale_dry_run(figures, make_job("name", "1", "100Mi", "0", 1, 3, 1), 0, 1.0, False) == 1


def test_scale_dry_run_no_more_cpu() -> None:
    figures = _cluster((1000, 1000), (1000, 100), (0, 0))
    assert scale_dry_run(figures, make_job("name", "1", "100Mi", "0", 1, 3, 1), 0, 1.0, False) == 0


def test_scale_dry_run_more_gpu() -> None:
    figures = _cluster((2000, 0), (1000, 100), (10, 0))
    job = make_job("name", "1", "10Mi", "1", 1, 3, 1)
    assert scale_dry_run(figures, job, 0, 1.0, scale_down=False) == 1
    # "should not scale up if the scale down parameter is true"
    assert scale_dry_run(figures, job, 0, 1.0, scale_down=True) == 0


def test_scale_dry_run_no_more_gpu() -> None:
    figures = _cluster((2000, 0), (1000, 100), (10, 10))
    assert scale_dry_run(figures, make_job("name", "1", "10Mi", "1", 1, 3, 1), 0, 1.0, False) == 0


def test_scale_dry_run_scale_down_more_than_expected() -> None:
    figures = _cluster((1000, 1000), (1000, 1000), (10, 10), nodes=False)
    job = make_job("name", "1", "10Mi", "0", 1, 3, 6)
    assert [scale_dry_run(figures, job, diff, 1.0, True) for diff in (0, -1, -2, -3)] == [
        -1,
        -1,
        -1,
        0,
    ]


def test_scale_dry_run_scale_down_to_min() -> None:
    figures = _cluster((3000, 5000), (1000, 1000), (10, 10))
    job = make_job("name", "1", "10Mi", "0", 1, 3, 3)
    assert [scale_dry_run(figures, job, diff, 1.0, True) for diff in (0, -1, -2)] == [-1, -1, 0]


def test_scale_dry_run_scale_down_full_cluster() -> None:
    figures = _cluster((1000, 2000), (1000, 1000), (10, 10))
    job = make_job("name", "1", "10Mi", "0", 1, 3, 3)
    assert scale_dry_run(figures, job, 0, 1.0, scale_down=True) == -1
    # "should not scale down if the scale down parameter is false"
    assert scale_dry_run(figures, job, 0, 1.0, scale_down=False) == 0


def test_scale_dry_run_no_memory() -> None:
    figures = _cluster((1000, 1000), (1000, 1000), (10, 10))
    assert scale_dry_run(figures, make_job("name", "1", "100Mi", "0", 1, 3, 1), 0, 1.0, False) == 0


def _all(cluster: ClusterResource, job: ElasticJob, max_load: float) -> int:
    diff, oscillating = scale_all_dry_run([job], cluster, max_load)
    assert not oscillating
    return diff[job.key]


def test_scale_all_dry_run_no_memory() -> None:
    cluster = ClusterResource(
        cpu_total_milli=1000,
        memory_request_mega=1000,
        memory_total_mega=1000,
        gpu_total=10,
        nodes=ALL_IDLE,
    )
    assert _all(cluster, make_job("name", "1", "1", "1", 1, 3, 1), 1.0) == 0


def test_scale_all_dry_run() -> None:
    cluster = ClusterResource(
        cpu_total_milli=4000,
        cpu_request_milli=1000,
        memory_total_mega=1000,
        memory_request_mega=100,
        gpu_total=10,
        gpu_limit=8,
        nodes=ALL_IDLE,
    )
    assert _all(cluster, make_job("name", "1", "100Mi", "0", 1, 3, 1), 1.0) == 2


def test_scale_all_dry_run_not_full() -> None:
    cluster = ClusterResource(
        cpu_total_milli=3000,
        cpu_request_milli=1000,
        memory_total_mega=1000,
        memory_request_mega=100,
        gpu_total=10,
        nodes=ALL_IDLE,
    )
    assert _all(cluster, make_job("name", "1", "100Mi", "0", 1, 3, 1), 0.8) == 1


def test_scale_all_dry_run_down_not_full() -> None:
    cluster = ClusterResource(
        cpu_total_milli=3000,
        cpu_request_milli=3000,
        memory_total_mega=1000,
        memory_request_mega=100,
        gpu_total=10,
        nodes=ALL_IDLE,
    )
    assert _all(cluster, make_job("name", "1", "100Mi", "0", 1, 3, 3), 0.8) == -1


def test_scale_all_dry_run_less_cpu() -> None:
    cluster = ClusterResource(
        cpu_total_milli=3000,
        cpu_request_milli=2000,
        memory_total_mega=1000,
        memory_request_mega=100,
        gpu_total=10,
        gpu_limit=8,
        nodes=ALL_IDLE,
    )
    assert _all(cluster, make_job("name", "1", "1", "1", 1, 3, 1), 1.0) == 1


def test_scale_all_dry_run_less_gpu() -> None:
    cluster = ClusterResource(
        cpu_total_milli=2000,
        cpu_request_milli=990,
        memory_total_mega=1000,
        memory_request_mega=100,
        gpu_total=10,
        gpu_limit=9,
        nodes=ALL_IDLE,
    )
    assert _all(cluster, make_job("name", "1", "1", "1", 1, 3, 1), 1.0) == 1


def test_fulfillment() -> None:
    assert make_job("name", "1", "1", "1", 1, 2, 2).fulfillment == 1
    assert make_job("name", "1", "1", "1", 1, 2, 1).fulfillment == 0
    assert make_job("name", "1", "1", "1", 1, 3, 2).fulfillment == 0.5


def test_sorted_jobs() -> None:
    jobs = [
        make_job("a", "1", "1", "1", 1, 2, 2),
        make_job("b", "1", "1", "1", 1, 20, 2),
        make_job("c", "1", "1", "1", 1, 10, 2),
        make_job("d", "1", "1", "1", 1, 1, 2),
    ]
    assert [j.key for j in sorted_jobs(jobs)] == ["b", "c", "a"]


def test_sorted_jobs_with_tie() -> None:
    jobs = [
        make_job("a", "1", "1", "1", 1, 2, 1),
        make_job("b", "1", "1", "0", 1, 2, 1),
        make_job("c", "10", "1", "0", 1, 2, 1),
        make_job("d", "1", "2", "0", 1, 2, 1),
    ]
    assert [j.key for j in sorted_jobs(jobs)] == ["b", "d", "c", "a"]


# ----- one round: pending jobs, candidates, oscillation -----------------------------

ONE_CPU = TrainerDemand(cpu_request=Fraction(1))


def _roomy() -> ClusterResource:
    return ClusterResource(
        cpu_total_milli=8000, memory_total_mega=16000, nodes={"n": NodeRoom(8000, 16000)}
    )


def test_only_jobs_with_all_trainers_running_are_planned() -> None:
    running = ElasticJob("ns/a", 1, 4, 1, ONE_CPU, TrainerPods(1, 1, 0))
    mixed = ElasticJob("ns/b", 1, 4, 2, ONE_CPU, TrainerPods(2, 1, 0))
    result = plan(_roomy(), [running, mixed], 1.0)
    assert result.targets() == {"ns/a": 4}
    assert result.decisions[1].target is None
    assert result.decisions[1].reason == (
        "left alone: its trainers are not all Running and no job is pending"
    )
    assert not result.have_pending


def test_a_pending_job_makes_every_job_a_candidate() -> None:
    mixed = ElasticJob("ns/b", 1, 4, 2, ONE_CPU, TrainerPods(2, 1, 0))
    waiting = ElasticJob("ns/c", 1, 1, 1, ONE_CPU, TrainerPods(1, 0, 1))
    result = plan(_roomy(), [mixed, waiting], 1.0)
    assert result.have_pending
    assert result.targets() == {"ns/b": 4}
    assert result.decisions[1].reason == "not elastic: max-instance is not above min-instance"


def test_a_job_without_pods_counts_as_pending_and_running() -> None:
    fresh = ElasticJob("ns/a", 1, 3, 1, ONE_CPU, TrainerPods(0, 0, 0))
    result = plan(_roomy(), [fresh], 1.0)
    assert result.have_pending
    assert result.targets() == {"ns/a": 3}
    assert result.decisions[0].change == 2


def test_gpu_scale_up_over_max_load_oscillates_and_stops() -> None:
    # The last free GPU is taken by a scale-up, which puts the GPU limits over
    # max_load, so the scale-down pass gives it back: upstream looped forever.
    cluster = ClusterResource(
        cpu_total_milli=16000,
        memory_total_mega=64000,
        gpu_total=10,
        gpu_limit=9,
        nodes={"gpu-node": NodeRoom(16000, 64000)},
    )
    job = ElasticJob("ns/gpu", 1, 3, 1, TrainerDemand(Fraction(1), Fraction(10**9), Fraction(1)))
    result = plan(cluster, [job], 0.9)
    assert result.oscillating
    assert result.targets() == {"ns/gpu": 1}


# ----- properties --------------------------------------------------------------------

_jobs = st.lists(
    st.builds(
        lambda i, low, spread, current, cpu, mem, gpu, phase: ElasticJob(
            f"ns/job-{i}",
            low,
            low + spread,
            current,
            TrainerDemand(Fraction(cpu, 1000), Fraction(mem * 10**6), Fraction(gpu)),
            TrainerPods(*phase),
        ),
        st.integers(0, 10**6),
        st.integers(1, 5),
        st.integers(0, 5),
        st.integers(0, 12),
        st.integers(0, 4000),
        st.integers(0, 8000),
        st.integers(0, 2),
        st.sampled_from([(0, 0, 0), (2, 2, 0), (2, 0, 2), (2, 1, 1)]),
    ),
    max_size=5,
    unique_by=lambda j: j.key,
)
_clusters = st.builds(
    lambda nodes, cpu_req, mem_req, gpu_total, gpu_limit: ClusterResource(
        cpu_total_milli=sum(n[0] for n in nodes),
        memory_total_mega=sum(n[1] for n in nodes),
        gpu_total=gpu_total,
        cpu_request_milli=cpu_req,
        memory_request_mega=mem_req,
        gpu_limit=gpu_limit,
        nodes={f"node-{i}": NodeRoom(*n) for i, n in enumerate(nodes)},
    ),
    st.lists(st.tuples(st.integers(0, 32000), st.integers(0, 128000)), min_size=1, max_size=4),
    st.integers(0, 64000),
    st.integers(0, 256000),
    st.integers(0, 16),
    st.integers(0, 16),
)


@settings(max_examples=150, deadline=None)
@given(cluster=_clusters, jobs=_jobs, max_load=st.sampled_from([0.5, 0.8, 0.9, 0.97, 1.0]))
def test_targets_stay_within_the_jobs_bounds(
    cluster: ClusterResource, jobs: list[ElasticJob], max_load: float
) -> None:
    result = plan(cluster, jobs, max_load)
    for decision in result.decisions:
        job = decision.job
        if decision.target is None:
            assert not job.elastic or decision.reason
            continue
        assert job.elastic
        assert decision.target <= job.max_instance
        assert decision.target >= min(job.parallelism, job.min_instance)


@settings(max_examples=60, deadline=None)
@given(cluster=_clusters, jobs=_jobs, data=st.data())
def test_the_plan_does_not_depend_on_the_order_of_the_jobs(
    cluster: ClusterResource, jobs: list[ElasticJob], data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(jobs))
    assert plan(cluster, jobs, 0.9).targets() == plan(cluster, shuffled, 0.9).targets()
