"""The web UI: a URL's preview card, the latest processed URLs, the fetchers' domain table.

Served on `web.listen` by the metadata-api role (so by `spiderduck up` too), from the same store
and NATS connection as the gRPC API. Server-side Jinja2 templates, escaped by default; one small
script (static/app.js) for the live list and the admin actions' bearer token.
"""
