"""``registration: pod-set`` under mocks: what is registered, and the per-object plan.

What the cluster does with a pod set (apply, refresh, destroy) is proven on the real
engine and API server: tests/cluster/pulumi_up/test_pod_set.py.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import normalise, run_program
from trainjobs.components import TrainingJob
from trainjobs.components.job import InvalidJobError
from trainjobs.components.pod_set import is_member, member_key, object_actions
from trainjobs.spec import load_path

POD_SET = "pulumi-python:dynamic/trainjobs:PodSet"


def _job(path: str = "tf-mnist/tfjob.yaml", **options: Any) -> dict[str, Any]:
    doc: dict[str, Any] = load_path(EXAMPLES / path).jobs[0].job.to_manifest()
    doc["trainjobs"] = {"target": "pods", "registration": "pod-set", **options}
    return doc


def _pod(image: str = "a:1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "w-0", "namespace": "ns", "labels": {"x": "1"}},
        "spec": {"containers": [{"name": "c", "image": image}], **spec},
    }


def test_one_pod_set_holds_every_pod_and_service_and_nothing_else() -> None:
    resources = run_program(lambda: TrainingJob("mnist", _job()))
    sets = [r for r in resources if r.type == POD_SET]
    assert len(sets) == 1
    assert not [r for r in resources if r.type.startswith("kubernetes:core/v1:")]
    objects = normalise(sets[0].inputs["objects"])
    assert sorted(objects) == [
        f"{kind} kubeflow/mnist-{role}"
        for kind in ("Pod", "Service")
        for role in ("chief-0", "ps-0", "worker-0", "worker-1")
    ]
    assert all(m["apiVersion"] == "v1" and member_key(m) == k for k, m in objects.items())
    # Each object carries the stack's owner label: what a destroy checks before deleting.
    assert {m["metadata"]["labels"]["trainjobs.dev/stack"] for m in objects.values()} == {
        "trainjobs.test"
    }
    assert sets[0].parent.endswith("trainjobs:index:TrainingJob::mnist")
    assert sets[0].name == "mnist:pod-set"


def test_other_objects_stay_their_own_resources_and_come_first() -> None:
    """An MPIJob on the pods target: its ConfigMap, Secret (generated key pair),
    ServiceAccount and RBAC are resources of their own, created before the pod set."""
    resources = run_program(lambda: TrainingJob("pi", _job("mpi-v1-pi/mpijob.yaml")))
    sets = [r for r in resources if r.type == POD_SET]
    assert len(sets) == 1
    others = [r for r in resources if r.type.startswith("kubernetes:") and r.custom]
    assert others and not [r for r in others if r.type.endswith((":Pod", ":Service"))]
    depends = set(sets[0].options["dependencies"])
    assert {r.urn for r in others if not r.type.startswith("kubernetes:yaml/")} <= depends


def test_the_status_reads_each_pods_phase_from_the_set() -> None:
    seen: dict[str, Any] = {}

    def program() -> None:
        job = TrainingJob("mnist", _job())
        job.status.apply(lambda s: seen.setdefault("status", s))

    phases = {"mnist-chief-0": "Running", "mnist-worker-0": "Pending"}
    run_program(program, live={POD_SET: {"phases": phases}})
    assert seen["status"] == {
        "pods": {
            "mnist-chief-0": "Running",
            "mnist-ps-0": None,
            "mnist-worker-0": "Pending",
            "mnist-worker-1": None,
        }
    }


def test_a_plain_job_keeps_its_objects_in_plain_text() -> None:
    resources = run_program(lambda: TrainingJob("mnist", _job()))
    pod_set = next(r for r in resources if r.type == POD_SET)
    # (The SDK keeps its pickled provider, ``__provider``, secret in any case.)
    assert "objects" not in pod_set.options["secret_inputs"]
    assert pod_set.options["secret_outputs"] == ["cluster"]


def test_a_secret_job_keeps_its_objects_secret() -> None:
    resources = run_program(lambda: TrainingJob("mnist", _job(), secret=True))
    pod_set = next(r for r in resources if r.type == POD_SET)
    # (The SDK keeps the pickled provider secret too when any input is.)
    assert "objects" in pod_set.options["secret_inputs"]
    assert "objects" in pod_set.options["secret_outputs"]


def test_waiting_for_the_pods_is_passed_as_seconds() -> None:
    resources = run_program(lambda: TrainingJob("mnist", _job(wait="running", waitTimeout="90m")))
    pod_set = next(r for r in resources if r.type == POD_SET)
    assert normalise(pod_set.inputs["waitSeconds"]) == 5400


def test_another_target_is_refused_at_the_option() -> None:
    doc = _job()
    doc["trainjobs"]["target"] = "operator"
    with pytest.raises(InvalidJobError) as caught:
        run_program(lambda: TrainingJob("mnist", doc))
    (finding,) = [f for f in caught.value.findings if f.code == "registration.target"]
    assert finding.path.endswith("trainjobs.registration")
    assert "target: pods" in finding.hint


def test_a_job_with_its_own_kubernetes_provider_is_refused() -> None:
    import pulumi_kubernetes as k8s

    def program() -> None:
        provider = k8s.Provider("other", kubeconfig="{}")
        TrainingJob("mnist", _job(), opts=pulumi.ResourceOptions(providers=[provider]))

    with pytest.raises(Exception, match="registration: objects"):
        run_program(program)


def test_only_pods_and_services_are_members() -> None:
    assert is_member(_pod())
    assert is_member({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}})
    assert not is_member({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert not is_member({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}})


def test_actions_follow_the_kubernetes_providers_replace_rules() -> None:
    old = {"Pod ns/w-0": _pod(), "Pod ns/w-1": _pod(), "Pod ns/w-2": _pod()}
    relabelled = copy.deepcopy(_pod())
    relabelled["metadata"]["labels"]["x"] = "2"
    new = {
        "Pod ns/w-0": _pod("a:2"),  # an image: the provider replaces the Pod
        "Pod ns/w-1": relabelled,  # a label: updated in place
        "Pod ns/w-3": _pod(),
    }
    assert object_actions(old, new) == {
        "Pod ns/w-0": "replace",
        "Pod ns/w-1": "update",
        "Pod ns/w-2": "delete",
        "Pod ns/w-3": "create",
    }


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
_sets = st.dictionaries(
    st.sampled_from(["Pod ns/a", "Pod ns/b", "Service ns/a"]),
    st.fixed_dictionaries({"apiVersion": st.just("v1"), "kind": st.just("Pod"), "spec": _values}),
    max_size=3,
)


@given(_sets, _sets)
def test_exactly_the_objects_that_differ_have_an_action(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    actions = object_actions(old, new)
    # As YAML (and JSON) tell them apart: false is not 0.
    differ = {k for k in {*old, *new} if _json(old.get(k)) != _json(new.get(k))}
    assert set(actions) == differ
    assert object_actions(new, new) == {}


def test_a_namespace_that_is_an_input_stays_out_of_the_keys() -> None:
    """A namespace given as a Pulumi Output: the keys do not change with its value, and
    each object's own metadata (where the cluster is asked) holds the value."""
    resources = run_program(
        lambda: TrainingJob("mnist", _job(), namespace=pulumi.Output.from_input("team-a"))
    )
    pod_set = next(r for r in resources if r.type == POD_SET)
    objects = normalise(pod_set.inputs["objects"])
    assert "Pod mnist-worker-0" in objects
    assert {m["metadata"]["namespace"] for m in objects.values()} == {"team-a"}


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def test_the_components_argument_chooses_it_too() -> None:
    """``TrainingJob(..., registration="pod-set")`` (the provider's ``registration``
    input) on a job whose own options say nothing."""
    doc = _job()
    del doc["trainjobs"]["registration"]
    assert not [r for r in run_program(lambda: TrainingJob("a", doc)) if r.type == POD_SET]
    made = run_program(lambda: TrainingJob("b", doc, registration="pod-set"))
    assert len([r for r in made if r.type == POD_SET]) == 1
