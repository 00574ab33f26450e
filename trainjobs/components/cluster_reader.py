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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import urllib3
import yaml

from trainjobs.errors import TrainjobsError
from trainjobs.k8s.ownership import ObjectKey

__all__ = ["ClusterAccess", "ClusterReadError", "read_labels", "refusal"]

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

    def client(self) -> _Client:
        """A client of the cluster, configured from the kubeconfig (or the pod)."""
        # The client library is untyped: reached through Any. Only its kubeconfig loader
        # and Configuration are used, whose interface has held across its releases (its
        # generated ApiClient has not: release 37 changed call_api).
        kclient: Any = importlib.import_module("kubernetes.client")
        kconfig: Any = importlib.import_module("kubernetes.config")
        configuration = kclient.Configuration()
        text = self.kubeconfig
        # Named in a refusal: a file's path, never the text of an inline kubeconfig (it
        # may hold credentials).
        source = "(given inline)"
        try:
            if text is not None and text.lstrip().startswith(_KUBECONFIG_TEXT):
                kconfig.load_kube_config_from_dict(
                    yaml.safe_load(text),
                    context=self.context,
                    client_configuration=configuration,
                    persist_config=False,
                )
                return _Client(configuration)
            path = text or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
            source = path
            exists = any(os.path.exists(p) for p in path.split(os.pathsep) if p)
            if text is None and not exists and os.environ.get("KUBERNETES_SERVICE_HOST"):
                kconfig.load_incluster_config(client_configuration=configuration)
                return _Client(configuration)
            kconfig.load_kube_config(
                config_file=path,
                context=self.context,
                client_configuration=configuration,
                persist_config=False,
            )
        except Exception as exc:  # the loader raises ConfigException, OSError, yaml errors
            raise ClusterReadError(f"cannot load the kubeconfig {source}: {exc}") from None
        return _Client(configuration)


_KUBECONFIG_TEXT = ("{", "apiVersion", "kind", "clusters", "current-context", "users")
"""How ``kubernetes:kubeconfig`` holding the kubeconfig itself (not a path) begins."""


class _Client:
    """GETs to the API server as a ``kubernetes.client.Configuration`` says: its server,
    CA, client certificate, and token (an exec plugin's refreshed first)."""

    def __init__(self, configuration: Any) -> None:
        self.configuration = configuration
        options: dict[str, Any] = {
            "cert_reqs": "CERT_REQUIRED" if configuration.verify_ssl else "CERT_NONE",
            "ca_certs": configuration.ssl_ca_cert,
            "cert_file": configuration.cert_file,
            "key_file": configuration.key_file,
            "maxsize": 16,
        }
        if getattr(configuration, "tls_server_name", None):
            options["server_hostname"] = configuration.tls_server_name
        self.pool: urllib3.PoolManager = (
            urllib3.ProxyManager(configuration.proxy, **options)
            if configuration.proxy
            else urllib3.PoolManager(**options)
        )

    def _headers(self, accept: str) -> dict[str, str]:
        configuration = self.configuration
        if configuration.refresh_api_key_hook is not None:
            configuration.refresh_api_key_hook(configuration)
        headers = {"Accept": accept}
        token = configuration.get_api_key_with_prefix("authorization")
        if token:
            headers["Authorization"] = token
        elif configuration.username:
            credentials = f"{configuration.username}:{configuration.password or ''}"
            headers.update(urllib3.util.make_headers(basic_auth=credentials))
        return headers

    def get(self, path: str, accept: str) -> Any | None:
        """GET ``path`` as JSON; None when the server says NotFound."""
        status, data = self.request("GET", path, accept=accept)
        if status == 404:
            return None
        if status >= 300:
            raise ClusterReadError(f"GET {path}: {refusal(status, data)}")
        return data

    def request(
        self,
        method: str,
        path: str,
        *,
        accept: str = "application/json",
        body: Any = None,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        """``method`` ``path`` (with its query), ``body`` sent as JSON: the status and the
        answer decoded (None when it is not JSON). Raises only when the server cannot be
        reached; the caller reads the status."""
        url = f"{str(self.configuration.host).rstrip('/')}{path}"
        headers = self._headers(accept)
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = json.dumps(body, separators=(",", ":")).encode()
        try:
            response = self.pool.request(
                method, url, headers=headers, body=payload, timeout=TIMEOUT, retries=False
            )
        except urllib3.exceptions.HTTPError as exc:
            raise ClusterReadError(f"{method} {path}: {exc}") from None
        try:
            data = json.loads(response.data) if response.data else None
        except ValueError:
            data = None
        return response.status, data


def refusal(status: int, data: Any) -> str:
    """The API server's own words for a refusal: its Status message, else the code."""
    message = data.get("message") if isinstance(data, Mapping) else None
    return f"{status} {message}" if message else str(status)


@dataclass(frozen=True)
class _Kind:
    plural: str
    namespaced: bool


def _discover(api: _Client, api_version: str, kind: str) -> _Kind | None:
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    found = api.get(base, "application/json")
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
            listed = api.get(
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
            got = api.get(
                _path(api_version, kind, namespace, key.name),
                _META.format("PartialObjectMetadata"),
            )
            if got is not None:
                found[key] = _labels(got.get("metadata") or {})

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(read_group, g) for g in sorted(groups)]:
            future.result()
    return found
