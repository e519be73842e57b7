"""The `spiderduck` command: wires the roles together (`up`) and talks to a running service."""
