"""The trainjobs policy pack: ``pulumi preview --policy-pack policy``.

Configured as any policy pack is, with a file given to ``--policy-pack-config``
(``restricted.json`` here holds the Pod Security ``restricted`` profile); each
policy's config schema (``profile``, ``ignore``, ``k8sVersion``) is published with
the pack, so Pulumi checks such a file before anything runs.
"""

from pulumi_policy import PolicyPack

from trainjobs.components.policy import policies

PolicyPack(name="trainjobs", policies=policies())
