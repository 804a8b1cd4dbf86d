"""``alertforge view``: inputs, the cache, the live site builder and its server."""
