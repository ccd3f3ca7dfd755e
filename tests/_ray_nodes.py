"""Real Ray nodes for the cluster tests. Importing this module imports Ray: a test module
that does is skipped, by name, when Ray is missing, unless ``POKERBOT_REQUIRE_CLUSTER`` is
set (CI sets it: there a missing Ray fails the tests)."""

from __future__ import annotations

import os
from typing import Any

import pytest

if os.environ.get("POKERBOT_REQUIRE_CLUSTER"):
    import ray
else:
    ray = pytest.importorskip("ray", reason="the cluster extra: pip install -e '.[cluster]'")

__all__ = ["OBJECT_STORE", "ray", "two_nodes"]

#: Each node's object store (Ray's smallest is about 75 MiB).
OBJECT_STORE = 160 * 1024 * 1024


def two_nodes() -> Any:
    """A local cluster (``ray.cluster_utils.Cluster``) of a head and a second node, one CPU
    each, with small object stores; this process is not connected to it. Its processes
    are the cluster's own (``remove_node`` and ``shutdown`` end them by process id)."""
    from ray.cluster_utils import Cluster

    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": OBJECT_STORE, "include_dashboard": False},
    )
    c.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
    return c
