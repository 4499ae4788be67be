"""``engine ui``: a read-only web application over the event store, live.

source.py reads the store read-only; runs.py keeps each run's fold up to date; live.py polls the
store's heads and pushes fragments to open pages (server-sent events); pages_*.py render the pages
(the run's report sections are engine/audit's, shared with ``engine report``); security.py is the
bind rule, the token and the response headers; app.py wires the routes.
"""
