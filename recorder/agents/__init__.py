"""recorder.agents: what decides the next tool call or action: model-backed agents for both
kinds of run and the episode policies."""
