from tests.store_pg.server import own_server, pg_url  # noqa: F401 - the PostgreSQL servers
