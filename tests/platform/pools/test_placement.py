"""Placement: GPU replicas of any framework and target land on the pool they name."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.platform.pools.docs import pool, pool_doc, tfjob
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.platform.pools.placement import (
    Placement,
    node_selector,
    place_template,
    placement_of,
    tolerates,
)
from trainjobs.platform.pools.spec import Taint
from trainjobs.spec import parse_documents

TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}
SELECTOR = {"trainjobs.dev/node-pool": "a100", "karpenter.k8s.aws/instance-gpu-name": "a100"}


def _pods(*docs: dict[str, Any], target: str = "pods") -> dict[str, dict[str, Any]]:
    rendering = run(parse_documents(list(docs)), target=target)  # type: ignore[arg-type]
    return {m["metadata"]["name"]: m for m in rendering.manifests if m["kind"] == "Pod"}


def _errors(*docs: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        run(parse_documents(list(docs)))
    return [f.render() for f in err.value.findings]


def test_node_selector_per_provider() -> None:
    assert node_selector(pool()) == SELECTOR
    assert node_selector(pool(provider="gke", labels={"team": "a"})) == {
        "trainjobs.dev/node-pool": "a100",
        "team": "a",
        "cloud.google.com/gke-accelerator": "nvidia-a100-80gb",
    }
    assert node_selector(pool(provider="eks")) == {"trainjobs.dev/node-pool": "a100"}
    assert node_selector(pool(provider="static", labels={"rack": "r1"})) == {"rack": "r1"}
    gfd = pool(provider="static", static={"gpuFeatureDiscovery": True})
    assert node_selector(gfd) == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}


def test_gpu_workers_are_placed_and_the_cpu_ps_stays_off_the_pool() -> None:
    pods = _pods(pool_doc(), tfjob(ps=True))
    worker = pods["tf-worker-0"]
    assert worker["spec"]["nodeSelector"] == SELECTOR
    assert worker["spec"]["tolerations"] == [TOLERATION]
    assert worker["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
    assert worker["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 4},
        "requests": {"nvidia.com/gpu": 4},
    }
    ps = pods["tf-ps-0"]
    assert "nodeSelector" not in ps["spec"] and "tolerations" not in ps["spec"]


def test_a_replica_named_explicitly_is_placed_even_without_gpus() -> None:
    options = {"nodePool": {"Worker": "a100", "ps": "cpu"}}
    cpu_pool = pool_doc("cpu", provider="static", gpu="t4", labels={"pool": "cpu"}, taints=[])
    pods = _pods(pool_doc(), cpu_pool, tfjob(ps=True, options=options))
    assert pods["tf-ps-0"]["spec"]["nodeSelector"] == {"pool": "cpu"}
    assert "tolerations" not in pods["tf-ps-0"]["spec"]
    assert pods["tf-worker-1"]["spec"]["nodeSelector"] == SELECTOR


def test_placement_composes_with_the_users_own_scheduling_fields() -> None:
    own_toleration = {"key": "team", "operator": "Exists", "effect": "NoSchedule"}
    anti: dict[str, Any] = {"preferredDuringSchedulingIgnoredDuringExecution": []}
    affinity = {"podAntiAffinity": anti}
    job = tfjob(nodeSelector={"zone": "a"}, tolerations=[own_toleration], affinity=affinity)
    spec = _pods(pool_doc(), job)["tf-worker-0"]["spec"]
    assert spec["nodeSelector"] == {"zone": "a", **SELECTOR}
    assert spec["tolerations"] == [own_toleration, TOLERATION]
    assert spec["affinity"] == affinity


def test_operator_target_carries_the_placement_in_the_custom_resource() -> None:
    rendering = run(parse_documents([pool_doc(), tfjob()]), target="operator")
    (tf,) = [m for m in rendering.manifests if m["kind"] == "TFJob"]
    template = tf["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    assert template["spec"]["nodeSelector"] == SELECTOR
    assert template["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}


def test_pytorch_job_is_placed_through_the_same_contract() -> None:
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "ddp", "namespace": "training"},
        "spec": {
            "pytorchReplicaSpecs": {
                role: {
                    "replicas": n,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "pytorch",
                                    "image": "torch:2",
                                    "resources": {"requests": {"nvidia.com/gpu": 1}},
                                }
                            ]
                        }
                    },
                }
                for role, n in (("Master", 1), ("Worker", 3))
            }
        },
        "trainjobs": {"nodePool": "a100"},
    }
    pods = _pods(pool_doc(), job)
    for name in ("ddp-master-0", "ddp-worker-2"):
        spec = pods[name]["spec"]
        assert spec["nodeSelector"] == SELECTOR
        # A GPU request alone is refused by Kubernetes: the limit is written beside it.
        assert spec["containers"][0]["resources"] == {
            "requests": {"nvidia.com/gpu": 1},
            "limits": {"nvidia.com/gpu": 1},
        }


def test_placement_findings() -> None:
    conflict = tfjob(nodeSelector={"trainjobs.dev/node-pool": "t4"})
    conflict["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"][
        "requests"
    ] = {"nvidia.com/gpu": 2}
    assert _errors(pool_doc(), conflict) == [
        "error: jobs[0].spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources"
        ".requests['nvidia.com/gpu']: nvidia.com/gpu requests (2) must equal limits (4); GPUs "
        "are never shared or overcommitted (got 2); fix: set requests and limits of "
        "nvidia.com/gpu to the same number",
        "error: jobs[0].spec.tfReplicaSpecs.Worker.template.spec.nodeSelector"
        "['trainjobs.dev/node-pool']: pool \"a100\" selects trainjobs.dev/node-pool=a100, but the "
        "template selects trainjobs.dev/node-pool=t4; no node has both (got 't4'); fix: remove "
        "nodeSelector trainjobs.dev/node-pool or use a pool whose nodes carry it",
    ]
    assert _errors(pool_doc(), tfjob(gpus=None)) == [
        'error: jobs[0].trainjobs.nodePool: the job names GPU pool "a100", but none of its '
        "replicas requests nvidia.com/gpu, so nothing would run there (got 'a100'); fix: "
        "request nvidia.com/gpu in the replicas that need GPUs, or name the replica types: "
        "nodePool: {Worker: a100}",
    ]
    assert _errors(pool_doc(), tfjob(options={"nodePool": {"Wroker": "a100"}})) == [
        "error: jobs[0].trainjobs.nodePool.Wroker: the job has no replica type 'Wroker' "
        "(got 'Wroker'); fix: use one of: Worker",
    ]
    assert _errors(pool_doc(), tfjob(options={"nodePool": "h100"})) == [
        "error: jobs[0].trainjobs.nodePool: no nodePool named 'h100' in this stack "
        "(got 'h100'); fix: use one of: a100",
    ]


def test_tolerations_follow_the_kubernetes_matching_rules() -> None:
    taint = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
    assert tolerates([{"operator": "Exists"}], taint)
    assert tolerates([{"key": "nvidia.com/gpu", "operator": "Exists"}], taint)
    assert tolerates([{"key": "nvidia.com/gpu", "value": "present"}], taint)
    assert not tolerates([{"key": "nvidia.com/gpu", "value": "absent"}], taint)
    assert not tolerates(
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}], taint
    )
    assert not tolerates([{"value": "present"}], taint)


_keys = st.sampled_from(["zone", "rack", "trainjobs.dev/node-pool", "gpu-pool"])
_selectors = st.dictionaries(_keys, st.sampled_from(["a", "b", "a100"]), max_size=3)
_tolerations = st.lists(
    st.fixed_dictionaries(
        {"key": _keys, "operator": st.sampled_from(["Exists", "Equal"])},
        optional={"effect": st.sampled_from(["NoSchedule", "NoExecute"])},
    ),
    max_size=3,
)


@given(own=_selectors, tolerations=_tolerations, pool_selector=_selectors)
def test_placement_keeps_what_the_user_wrote_and_is_idempotent(
    own: dict[str, str], tolerations: list[dict[str, str]], pool_selector: dict[str, str]
) -> None:
    placement = Placement(
        "p", pool_selector, (Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule"),)
    )
    template = {"spec": {"nodeSelector": own, "tolerations": tolerations, "containers": []}}
    placed, findings = place_template(template, placement, "t")
    spec = placed["spec"]
    assert spec["tolerations"][: len(tolerations)] == tolerations
    assert all(spec["nodeSelector"][k] == v for k, v in own.items())
    clashes = {k for k, v in pool_selector.items() if k in own and own[k] != v}
    assert len(findings) == len(clashes)
    if not clashes:
        assert all(spec["nodeSelector"][k] == v for k, v in pool_selector.items())
    again, _ = place_template(placed, placement, "t")
    assert again == placed
    assert template == {"spec": {"nodeSelector": own, "tolerations": tolerations, "containers": []}}


def test_placement_of_a_karpenter_pool_keeps_nodes_from_being_disrupted() -> None:
    assert placement_of(pool()).annotations == {"karpenter.sh/do-not-disrupt": "true"}
    assert placement_of(pool(provider="gke")).annotations == {}
