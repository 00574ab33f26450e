"""Read which of a stack's objects the cluster already has, and their labels.

The program reads the cluster the Kubernetes provider will write to, with the same
settings the provider reads: the stack's ``kubernetes:kubeconfig`` (a path or the
kubeconfig itself) and ``kubernetes:context``, else ``$KUBECONFIG`` (a ``:``-separated
list), else ``~/.kube/config``, else the pod's service account inside a cluster. Only
metadata is asked for (``PartialObjectMetadata``), never an object's data, so a
Secret's value is never read.

Objects of one kind in one namespace are read with one list when the stack declares
many of them (a pods-target job has one Pod per worker), else one get each. A kind the
cluster does not serve (its CRD is not installed yet) has no objects.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from trainjobs.errors import TrainjobsError
from trainjobs.k8s.ownership import ObjectKey

__all__ = ["ClusterAccess", "ClusterReadError", "read_labels"]

LIST_ABOVE = 10
"""Read a (kind, namespace) with one list when the stack declares more objects than this."""
TIMEOUT = 20.0
"""Seconds one request may take."""
_META = "application/json;as={};g=meta.k8s.io;v=v1,application/json"


class ClusterReadError(TrainjobsError):
    """The cluster could not be read (no kubeconfig, unreachable, forbidden)."""


@dataclass(frozen=True)
class ClusterAccess:
    """Where the cluster is, as the Kubernetes provider is configured.

    Attributes:
        kubeconfig: ``kubernetes:kubeconfig``: a path, or the kubeconfig's own text;
            default none ($KUBECONFIG, ~/.kube/config, in-cluster).
        context: ``kubernetes:context``; default the kubeconfig's current context.
    """

    kubeconfig: str | None = None
    context: str | None = None

    def client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` for the cluster."""
        # The client library is untyped: reached through Any.
        kclient: Any = importlib.import_module("kubernetes.client")
        kconfig: Any = importlib.import_module("kubernetes.config")
        text = self.kubeconfig
        try:
            if text is not None and text.lstrip().startswith(_KUBECONFIG_TEXT):
                return kconfig.new_client_from_config_dict(
                    yaml.safe_load(text), context=self.context, persist_config=False
                )
            path = text or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
            exists = any(os.path.exists(p) for p in path.split(os.pathsep) if p)
            if text is None and not exists and os.environ.get("KUBERNETES_SERVICE_HOST"):
                configuration = kclient.Configuration()
                kconfig.load_incluster_config(client_configuration=configuration)
                return kclient.ApiClient(configuration)
            return kconfig.new_client_from_config(
                config_file=path, context=self.context, persist_config=False
            )
        except Exception as exc:  # the client raises ConfigException, OSError, yaml errors
            raise ClusterReadError(f"cannot load the kubeconfig: {exc}") from None


_KUBECONFIG_TEXT = ("{", "apiVersion", "kind", "clusters", "current-context", "users")
"""How ``kubernetes:kubeconfig`` holding the kubeconfig itself (not a path) begins."""


def _get(api: Any, path: str, accept: str, query: Sequence[tuple[str, str]] = ()) -> Any | None:
    """GET ``path`` as JSON; None when the server says NotFound."""
    api_exception: Any = importlib.import_module("kubernetes.client.exceptions").ApiException
    try:
        response = api.call_api(
            path,
            "GET",
            query_params=list(query),
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
            _request_timeout=TIMEOUT,
        )
    except api_exception as exc:
        if exc.status == 404:
            return None
        reason = (exc.reason or "").strip()
        raise ClusterReadError(f"GET {path}: {exc.status} {reason}".rstrip()) from None
    except Exception as exc:  # urllib3's connection and TLS errors
        raise ClusterReadError(f"GET {path}: {exc}") from None
    return json.loads(response.data)


@dataclass(frozen=True)
class _Kind:
    plural: str
    namespaced: bool


def _discover(api: Any, api_version: str, kind: str) -> _Kind | None:
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    found = _get(api, base, "application/json")
    for resource in (found or {}).get("resources") or []:
        if resource.get("kind") == kind and "/" not in str(resource.get("name")):
            return _Kind(str(resource["name"]), bool(resource.get("namespaced")))
    return None


def _path(api_version: str, kind: _Kind, namespace: str, name: str = "") -> str:
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    scope = f"/namespaces/{namespace}" if kind.namespaced and namespace else ""
    tail = f"/{name}" if name else ""
    return f"{base}{scope}/{kind.plural}{tail}"


def _labels(meta: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}


def read_labels(
    access: ClusterAccess, keys: Iterable[ObjectKey]
) -> dict[ObjectKey, dict[str, str] | None]:
    """The labels of each object the cluster has, None for each it does not."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    api = access.client()
    kinds: dict[tuple[str, str], _Kind | None] = {}
    for api_version, kind in sorted({(k.api_version, k.kind) for k in wanted}):
        kinds[(api_version, kind)] = _discover(api, api_version, kind)
    groups: dict[tuple[str, str, str], list[ObjectKey]] = defaultdict(list)
    for key in wanted:
        groups[(key.api_version, key.kind, key.namespace)].append(key)
    found: dict[ObjectKey, dict[str, str] | None] = {key: None for key in wanted}

    def read_group(group: tuple[str, str, str]) -> None:
        api_version, kind_name, namespace = group
        kind = kinds[(api_version, kind_name)]
        members = groups[group]
        if kind is None:
            return
        if len(members) > LIST_ABOVE:
            listed = _get(
                api,
                _path(api_version, kind, namespace),
                _META.format("PartialObjectMetadataList"),
            )
            by_name = {
                str((item.get("metadata") or {}).get("name")): item.get("metadata") or {}
                for item in (listed or {}).get("items") or []
            }
            for key in members:
                if key.name in by_name:
                    found[key] = _labels(by_name[key.name])
            return
        for key in members:
            got = _get(
                api,
                _path(api_version, kind, namespace, key.name),
                _META.format("PartialObjectMetadata"),
            )
            if got is not None:
                found[key] = _labels(got.get("metadata") or {})

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(read_group, g) for g in sorted(groups)]:
            future.result()
    return found
