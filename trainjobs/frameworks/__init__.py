"""Framework plugins and their registry.

The names below are read from their modules on first use (``trainjobs._lazy``):
importing any module of this package runs this file, and ``Framework`` and its kin
bring in pydantic, which ``trainjobs --help`` and the registry's own import do
without.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs._lazy import lazy_exports

if TYPE_CHECKING:
    from trainjobs.frameworks.base import Framework
    from trainjobs.frameworks.registry import REGISTRY, Plugin, Registry

_HOMES = {
    "Framework": "trainjobs.frameworks.base",
    "REGISTRY": "trainjobs.frameworks.registry",
    "Plugin": "trainjobs.frameworks.registry",
    "Registry": "trainjobs.frameworks.registry",
}

__all__ = ["REGISTRY", "Framework", "Plugin", "Registry"]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOMES)
