"""The raw baseline of ``make bench-cluster``: what a user would write by hand.

The same objects ``trainjobs render`` prints (``rendered.yaml`` beside this file in the
bench's project copy) through ``pulumi_kubernetes.yaml.v2.ConfigFile``, not waited for
(``skip_await``, as trainjobs does not wait for training pods by default).
"""

import pulumi_kubernetes as k8s

k8s.yaml.v2.ConfigFile("job", file="rendered.yaml", skip_await=True)
