"""--live without a cluster: the kubectl calls preview builds, and how it compares.

What kubectl and the API server answer is proven against the real ones, in
tests/cluster/test_preview_live.py.
"""

from __future__ import annotations

import pytest

from trainjobs.preview.live import Kubectl, LiveError, prune, resource_arg


def test_no_kubectl_is_an_error() -> None:
    with pytest.raises(LiveError, match="no-such-kubectl is not on PATH"):
        Kubectl(program="no-such-kubectl").get({"apiVersion": "v1", "kind": "Pod", "metadata": {}})


def test_kubeconfig_and_context_are_passed_on() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}
    kubectl = Kubectl(kubeconfig="/k/config", context="prod")
    assert kubectl.command(pod) == [
        "kubectl", "get", "--output=json", "--namespace=n",
        "--kubeconfig=/k/config", "--context=prod", "--", "Pod", "p",
    ]  # fmt: skip
    assert Kubectl().command(namespace) == [
        "kubectl", "get", "--output=json", "--", "Namespace", "n"
    ]  # fmt: skip
    assert kubectl.discovery_command(pod) == [
        "kubectl", "get", "--raw=/api/v1", "--kubeconfig=/k/config", "--context=prod"
    ]  # fmt: skip


def test_names_from_the_input_never_become_kubectl_options() -> None:
    hostile = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "--kubeconfig=/tmp/evil", "namespace": "-A"},
    }
    command = Kubectl().command(hostile)
    cut = command.index("--")
    assert command[cut + 1 :] == ["Pod", "--kubeconfig=/tmp/evil"]
    assert "--namespace=-A" in command[:cut] and "-A" not in command


def test_discovery_asks_only_for_a_group_version_a_server_could_serve() -> None:
    def raw(api_version: str) -> list[str] | None:
        manifest = {"apiVersion": api_version, "kind": "TFJob", "metadata": {"name": "j"}}
        return Kubectl().discovery_command(manifest)

    assert raw("kubeflow.org/v1") == ["kubectl", "get", "--raw=/apis/kubeflow.org/v1"]
    assert raw("jobset.x-k8s.io/v1alpha2") == [
        "kubectl", "get", "--raw=/apis/jobset.x-k8s.io/v1alpha2"
    ]  # fmt: skip
    # Not a group and version: no server serves it, so nothing to ask (the kind is absent).
    for bad in ("../../api/v1/secrets", "kubeflow.org/V1", "a/b/v1", "", "Kubeflow.org/v1"):
        assert raw(bad) is None, bad


def test_resource_arg_is_fully_qualified_outside_the_core_group() -> None:
    assert resource_arg({"apiVersion": "v1", "kind": "Pod"}) == "Pod"
    assert resource_arg({"apiVersion": "kubeflow.org/v1", "kind": "TFJob"}) == (
        "TFJob.v1.kubeflow.org"
    )


def test_prune_keeps_what_either_render_sets() -> None:
    live = {"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2, 3], "server": "x"}
    assert prune(live, [{"a": 0, "b": {"c": 0}, "l": [0]}]) == {"a": 1, "b": {"c": 2}, "l": [1]}
    assert prune(live, [{"l": [0]}, {"l": [0, 0], "b": {"d": 0}}]) == {
        "b": {"d": 3},
        "l": [1, 2],
    }
