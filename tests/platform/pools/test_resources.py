"""Pod demand: what the scheduler reserves for one pod."""

from __future__ import annotations

from fractions import Fraction

from trainjobs.platform.pools.resources import PodDemand, pod_demand

GI = 2**30


def test_containers_add_up_and_requests_default_to_limits() -> None:
    template = {
        "spec": {
            "containers": [
                {"resources": {"limits": {"nvidia.com/gpu": 2, "cpu": "4", "memory": "8Gi"}}},
                {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": 1}}},
            ]
        }
    }
    assert pod_demand(template) == PodDemand(Fraction(2), Fraction(9, 2), Fraction(9 * GI))


def test_init_containers_count_one_at_a_time_and_sidecars_with_the_rest() -> None:
    template = {
        "spec": {
            "initContainers": [
                {"resources": {"requests": {"cpu": "6"}}},
                {"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
            ],
            "containers": [{"resources": {"requests": {"cpu": "2"}}}],
        }
    }
    assert pod_demand(template).cpu == 6
    assert pod_demand({"spec": {"containers": [{"name": "x"}]}}) == PodDemand()


def test_malformed_quantities_count_as_zero() -> None:
    template = {"spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}}
    assert pod_demand(template) == PodDemand()
