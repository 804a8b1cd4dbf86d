"""A small OpenEnv 0.10 environment that is not this project's: a counter, for record-openenv.

    python tests/openenv_counter_env.py PORT

An action ``{"add": n}`` adds ``n`` to the total; the reward is ``n``; the episode ends when
the total reaches ``reset(target=...)`` (default 3).
"""

from __future__ import annotations

import sys

sys.modules.setdefault("gradio", None)  # no web interface here: skip importing Gradio

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class AddAction(Action):
    add: int


class CounterObservation(Observation):
    total: int = 0
    target: int = 3


class Counter(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self):
        super().__init__()
        self.total, self.target, self.steps = 0, 3, 0

    def reset(self, seed=None, episode_id=None, target: int = 3, **kwargs):
        self.total, self.target, self.steps = 0, int(target), 0
        return CounterObservation(total=0, target=self.target, reward=0.0)

    def step(self, action, timeout_s=None, **kwargs):
        self.total += action.add
        self.steps += 1
        return CounterObservation(total=self.total, target=self.target, reward=float(action.add),
                                  done=self.total >= self.target)

    @property
    def state(self):
        return State(step_count=self.steps)


if __name__ == "__main__":
    import uvicorn

    app = create_app(Counter, AddAction, CounterObservation, env_name="counter",
                     max_concurrent_envs=2)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
