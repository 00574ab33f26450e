"""A small JSON client of a sandbox's API server (client-certificate auth)."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Api", "ApiError", "http_ok", "https_ok"]


class ApiError(RuntimeError):
    """The API server answered a request with an error status."""

    def __init__(self, method: str, path: str, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        message = body.get("message", json.dumps(body)[:500])
        super().__init__(f"{method} {path}: {status} {message}")


@dataclass
class Api:
    """A small JSON client of the API server (client-certificate auth).

    Enough for the fixture and the tests' waits; applying manifests goes through the
    real kubectl (:meth:`trainjobs.sandbox.ControlPlane.kubectl`).
    """

    port: int
    context: ssl.SSLContext

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        ok: Sequence[int] = (),
    ) -> dict[str, Any]:
        """Send one request; the decoded JSON answer. Statuses >= 400 not in ``ok`` raise."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=30)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Accept": "application/json"}
            if data is not None:
                headers["Content-Type"] = content_type
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            decoded = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            decoded = {"message": raw.decode(errors="replace")}
        if not isinstance(decoded, dict):
            decoded = {"value": decoded}
        if response.status >= 400 and response.status not in ok:
            raise ApiError(method, path, response.status, decoded)
        if response.status >= 400:
            decoded["_status"] = response.status
        return decoded

    def get(self, path: str) -> dict[str, Any] | None:
        """The object at ``path``, or None when it does not exist."""
        found = self.request("GET", path, ok=(404,))
        return None if found.get("_status") == 404 else found

    def items(self, path: str) -> list[dict[str, Any]]:
        """The items of a list ``path`` (e.g. ``/api/v1/namespaces/x/pods``)."""
        listed = self.request("GET", path)
        items: list[dict[str, Any]] = listed.get("items", [])
        return items

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", path, obj)

    def delete(self, path: str) -> None:
        self.request("DELETE", path, {"propagationPolicy": "Background"}, ok=(404,))

    def ready(self) -> bool:
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=5)
        try:
            conn.request("GET", "/readyz")
            return conn.getresponse().status == 200
        finally:
            conn.close()


def http_ok(port: int, path: str) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    finally:
        conn.close()


def https_ok(port: int, path: str) -> bool:
    # The component's own self-signed serving certificate: only liveness is asked.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    finally:
        conn.close()
