"""SpiderDuck for its clients: the generated stubs of the v1 API (`spiderduck.v1`, from protos/).

Nothing of the service lives here: the `spiderduck` command is the top-level `cli` package."""
