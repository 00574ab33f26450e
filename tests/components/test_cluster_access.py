"""How the components reach the cluster (``ClusterAccess``), when they cannot: the
refusal names the kubeconfig file, and never repeats the text of an inline one. Reads of
a real API server: tests/cluster/test_cluster_reader.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainjobs.components.cluster_reader import ClusterAccess, ClusterReadError


def test_a_missing_kubeconfig_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "kubeconfig"
    with pytest.raises(ClusterReadError) as refused:
        ClusterAccess(str(missing)).client()
    assert str(refused.value).startswith(f"cannot load the kubeconfig {missing}: ")


def test_an_inline_kubeconfig_is_never_repeated() -> None:
    token = "s3cret-token-4dabf181"
    text = f"apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {{token: {token}}}\n"
    with pytest.raises(ClusterReadError) as refused:
        ClusterAccess(text, context="absent").client()
    message = str(refused.value)
    assert message.startswith("cannot load the kubeconfig (given inline): ")
    assert token not in message
