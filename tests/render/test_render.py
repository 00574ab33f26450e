"""Rendering: determinism, apply order, target choice, and properties over varied input."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.paths import example_job_files, stack_files
from trainjobs.check import run
from trainjobs.k8s.names import dns1123_subdomain_problem, label_value_problem
from trainjobs.k8s.order import apply_rank
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import Target, load_path, parse_documents


def test_two_renders_are_byte_identical() -> None:
    for path in [*stack_files(), *example_job_files()]:
        targets: tuple[Target | None, ...] = (None, "operator", "pods")
        for target in targets:
            first = dump_all(run(load_path(path), target=target).manifests)
            second = dump_all(run(load_path(path), target=target).manifests)
            assert first == second, path


def test_objects_come_in_apply_order() -> None:
    for path in stack_files():
        ranks = [apply_rank(m) for m in run(load_path(path)).manifests]
        assert ranks == sorted(ranks)


def test_target_override_beats_the_job_option() -> None:
    stack = load_path(stack_files()[0])
    kinds = {m["kind"] for m in run(stack, target="operator").manifests}
    assert "Pod" not in kinds


def _job(kind: str, specs: dict[str, int], name: str, ns: str) -> dict[str, Any]:
    container = {"pytorch": "pytorch", "tensorflow": "tensorflow"}
    key, cname = (
        ("tfReplicaSpecs", container["tensorflow"])
        if kind == "TFJob"
        else ("pytorchReplicaSpecs", container["pytorch"])
    )
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            key: {
                rtype: {
                    "replicas": n,
                    "template": {"spec": {"containers": [{"name": cname, "image": "img:1"}]}},
                }
                for rtype, n in specs.items()
            }
        },
    }


_names = st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True)
_tf = st.fixed_dictionaries(
    {"Worker": st.integers(1, 6)},
    optional={"Chief": st.just(1), "PS": st.integers(1, 3), "Evaluator": st.just(1)},
)
_pt = st.fixed_dictionaries({"Master": st.just(1), "Worker": st.integers(1, 6)})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind_specs=st.one_of(st.tuples(st.just("TFJob"), _tf), st.tuples(st.just("PyTorchJob"), _pt)),
    name=_names,
    ns=_names,
    target=st.sampled_from(["operator", "pods"]),
)
def test_any_valid_job_renders_checked_and_deterministic(
    kind_specs: tuple[str, dict[str, int]], name: str, ns: str, target: str
) -> None:
    kind, specs = kind_specs
    doc = _job(kind, specs, name, ns)
    first = run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    again = run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    assert dump_all(first.manifests) == dump_all(again.manifests)
    pods = [m for m in first.manifests if m["kind"] == "Pod"]
    if target == "pods":
        assert len(pods) == sum(specs.values())
        for pod in pods:
            assert dns1123_subdomain_problem(pod["metadata"]["name"]) is None
            assert all(label_value_problem(v) is None for v in pod["metadata"]["labels"].values())
    else:
        assert pods == []
