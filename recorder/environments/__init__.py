"""recorder.environments: what agents act in: the alerting workspace and its tools, the
graded workspace, a live ARIA server, and the tasks served as an OpenEnv environment."""
