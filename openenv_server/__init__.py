"""openenv_server: the bundled tasks as an OpenEnv environment, and a recorder that drives any
OpenEnv environment through its client (:mod:`openenv_server.driver`)."""
