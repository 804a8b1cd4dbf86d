"""ARIA's ground truth of a curated task at a seed, for runs whose server does not report it.

ARIA's ``GET /multi-agent/state/{sid}`` has no ground truth (its ``DualAgentSession`` keeps it
inside ``env.DevOpsIncidentEnv``, whose own ``state()`` grades with it), so a dual-agent run's
score could not take the diagnosis part the server's grader gives. The ground truth of a
curated task is a function of the task and the seed alone: ``DevOpsIncidentEnv.reset`` builds
the task with ``random.Random(seed)`` (``env.py:43-49``) and the task's ``initialize`` draws
the scenario first. This module restates those draws, at ARIA commit 230f8d5:

- ``easy``: ``SCENARIOS[rng.randint(0, 2)]`` (``tasks/task_easy.py:9-46,94``), root cause
  ``memory_leak_<service>``, fix ``restart <service>``;
- ``medium``: ``SCENARIOS[rng.randint(0, 1)]``, then ``v2.3.{rng.randint(1, 5)}``
  (``tasks/task_medium.py:18-35,86-88,180-181``);
- ``hard``: ``v3.1.{rng.randint(0, 4)}`` (``tasks/task_hard.py:92,142-143``);
- ``bonus``, ``security``, ``database``, ``failover``: constants
  (``tasks/task_bonus.py:122-123``, ``task_security.py:129-130``, ``task_database.py:121-122``,
  ``task_failover.py:136-137``).

``generated`` depends on ARIA's incident factory and is not restated (its dual-agent reset
fails on the server anyway). Checked against the ``/state`` ground truth of every
single-agent transcript in tests/fixtures (seeds 3, 42 and 2024) and, by hand, against
``DualAgentSession(task, seed).env.state()`` for every dual-agent fixture session.
"""

from __future__ import annotations

import random
from typing import Any

SOURCE = "restated from ARIA's task code for this seed (recorder/episodes/ground_truth.py)"
"""How a run names a ground truth taken from here rather than from the server."""

_EASY = ("payment-service", "order-service", "user-service")
_MEDIUM = ("connection_pool_exhaustion_{service}_{version}", "null_pointer_exception_{service}_{version}")
_CONSTANT = {
    "bonus": ("disk_full_log_aggregator AND model_reload_loop_ml_inference",
              "alert_oncall for disk cleanup AND rollback ml-inference-service"),
    "security": ("ddos_attack_185.x.x.x_botnet_targeting_login_endpoint",
                 "block_ip_range_185.x.x.x AND alert_oncall security team"),
    "database": ("missing_index_orders_user_segment_column_migration",
                 "create index on orders.user_segment OR rollback migration"),
    "failover": ("us_east_1_network_partition_partial_region_failure",
                 ("failover api-gateway, cdn-service, order-service, redis-cache to us-west-2 AND "
                  "alert_oncall for payment-service and postgres-primary which cannot auto-failover")),
}


def seeded_ground_truth(task_id: str, seed: Any) -> dict[str, str] | None:
    """``{root_cause, fix, source}`` of curated ARIA task ``task_id`` reset with ``seed``.

    ``seed``: the int the run's reset sent. Returns None for a task this module does not
    restate (``generated``, unknown ids) or a seed that is not an int (ARIA then seeds from
    the clock, so nothing can be known). Raises nothing.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        return None
    if task_id in _CONSTANT:
        root_cause, fix = _CONSTANT[task_id]
    else:
        rng = random.Random(seed)
        if task_id == "easy":
            service = _EASY[rng.randint(0, len(_EASY) - 1)]
            root_cause, fix = f"memory_leak_{service.replace('-', '_')}", f"restart {service}"
        elif task_id == "medium":
            template = _MEDIUM[rng.randint(0, len(_MEDIUM) - 1)]
            version = f"v2.3.{rng.randint(1, 5)}"
            root_cause = template.format(service="inventory-service", version=version)
            fix = "rollback inventory-service"
        elif task_id == "hard":
            version = f"v3.1.{rng.randint(0, 4)}"
            root_cause = f"data_corruption_data_pipeline_{version}_incorrect_price_writes"
            fix = "rollback data-pipeline-service then alert_oncall for data audit"
        else:
            return None
    return {"root_cause": root_cause, "fix": fix, "source": SOURCE}
