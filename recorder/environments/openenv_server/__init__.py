"""The bundled tasks served as an OpenEnv environment (``alertforge serve-openenv``)."""
