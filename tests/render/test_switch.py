"""Which objects a one-update target switch takes over from the old target's controllers
(:func:`trainjobs.render.switch.adopted_objects`), on the examples' real jobs: the names
are the renderer's, not written here, except the ones the refusal hinges on."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainjobs.check import run
from trainjobs.render import RenderedJob
from trainjobs.render.switch import adopted_objects
from trainjobs.spec.load import load_path
from trainjobs.targets.names import Target

EXAMPLES = Path(__file__).parents[2] / "examples"


def _job(example: str, target: Target) -> RenderedJob:
    units = run(load_path(EXAMPLES / example), target=target).units
    (job,) = (u for u in units if isinstance(u, RenderedJob))
    return job


def test_operator_to_pods_takes_over_every_object_the_operator_made() -> None:
    job = _job("tf-mnist/tfjob.yaml", "pods")
    adopted = adopted_objects(job, "operator")
    assert adopted == tuple(o.title for o in job.objects)
    assert any(t.startswith("Pod ") for t in adopted)
    assert any(t.startswith("Service ") for t in adopted)


@pytest.mark.parametrize("previous", ["pods", "not-a-target", ""])
def test_nothing_is_taken_over_from_the_same_target_or_an_unknown_one(previous: str) -> None:
    assert adopted_objects(_job("tf-mnist/tfjob.yaml", "pods"), previous) == ()


@pytest.mark.parametrize("now", ["operator", "trainer"])
def test_moving_to_a_custom_resource_takes_nothing_over(now: Target) -> None:
    job = _job("pytorch-ddp/pytorchjob.yaml", now)
    for previous in ("operator", "pods", "trainer"):
        assert adopted_objects(job, previous) == ()


def test_trainer_to_pods_collides_only_where_the_trainer_uses_the_name() -> None:
    # A PyTorchJob's pods are <job>-<role>-<i>; the Trainer's JobSet names its Service
    # <job> and its pods <job>-node-0-<i>-<random>: nothing in common.
    assert adopted_objects(_job("pytorch-ddp/pytorchjob.yaml", "pods"), "trainer") == ()
    # An MPIJob's headless Service is <job>, as is the JobSet's.
    mpi = _job("mpi-horovod-benchmarks/mpijob.yaml", "pods")
    assert adopted_objects(mpi, "trainer") == ("Service training/horovod-benchmarks",)
    # A gang's PodGroup is <job> on both.
    gang = _job("gang-volcano/pytorchjob.yaml", "pods")
    assert adopted_objects(gang, "trainer") == ("PodGroup training/resnet-gang",)


def test_a_trainjob_loses_what_the_trainer_or_jobset_made() -> None:
    pods = _job("trainjob-mpi/trainjob.yaml", "pods")
    from_jobset = adopted_objects(pods, "jobset")
    assert from_jobset and {t.split()[0] for t in from_jobset} == {"Job", "Service"}
    assert adopted_objects(pods, "operator") == tuple(o.title for o in pods.objects)
    jobset = _job("trainjob-mpi/trainjob.yaml", "jobset")
    assert "JobSet default/pi" in adopted_objects(jobset, "operator")
    assert adopted_objects(jobset, "pods") == ()
