"""The components as a platform repo's own Pulumi program uses them: several of each,
Inputs and secrets in every field that takes one, and mistakes a person makes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.pulumi_harness import run_program
from trainjobs.components import TrainingJob
from trainjobs.components.job import InvalidJobError


def _tfjob(name: str = "mnist", namespace: str = "training") -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "registry.local/mnist:1"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [container]}}}
            }
        },
    }


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_an_unknown_gang_mechanism_is_refused_with_its_path(target: Any) -> None:
    """``gang`` is checked as the job's own ``trainjobs.gang`` is: neither dropped
    without a word (operator target) nor a KeyError (pods target)."""
    with pytest.raises(InvalidJobError) as err:
        run_program(lambda: TrainingJob("mnist", _tfjob(), target=target, gang="kueue"))
    (finding,) = err.value.findings
    assert finding.path == "job.trainjobs.gang"
    assert "'kueue'" in str(err.value)
    assert "volcano" in str(err.value)


def test_wait_given_to_the_component_keeps_the_jobs_own_wait_timeout() -> None:
    """``wait="running"`` alone changes how long nothing else: the ``waitTimeout`` beside
    the job (90m) stays, instead of falling back to the 60m default."""
    job = {**_tfjob(), "trainjobs": {"waitTimeout": "90m"}}
    resources = run_program(lambda: TrainingJob("mnist", job, wait="running"))
    (tfjob,) = [r for r in resources if r.type == "kubernetes:kubeflow.org/v1:TFJob"]
    assert tfjob.options["custom_timeouts"]["create"] == "90m"
