"""`engine ui` is safe by default: loopback unless a token guards it, answers only to localhost
names on loopback, sends a strict CSP, and cannot write to the store (SQLite and PostgreSQL)."""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from engine.ui.security import BindRefused, check_bind, is_loopback
from engine.ui.source import PostgresSource, SQLiteSource
from store.base import StoreError
from tests.ui.browser import engine_cmd, engine_env, serve_ui, wait_for
from tests.ui.writer import RunWriter

TOKEN = "t0ken-for-the-test-0123456789"


def _get(url: str, **headers: str) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_binding_a_non_loopback_address_without_a_token_is_refused(backend, host):
    RunWriter(backend.store, "r1")
    done = subprocess.run(engine_cmd("ui", "--db", backend.db, "--host", host, "--port", "0"), capture_output=True,
                          text=True, env={**engine_env(), "ENGINE_UI_TOKEN": ""}, timeout=120)
    assert done.returncode == 2, done
    assert f"refusing to listen on {host} without a token" in done.stderr
    assert "--token" in done.stderr and "Traceback" not in done.stderr


def test_a_token_guards_a_non_loopback_address(browser, backend):
    RunWriter(backend.store, "guarded-run")
    with serve_ui(backend.db, "--host", "0.0.0.0", "--token", TOKEN) as printed:
        assert printed.endswith(f"/?token={TOKEN}")
        base = printed.split("?")[0].replace("0.0.0.0", "127.0.0.1")
        status, body, _ = _get(base)
        assert status == 401 and "token" in body
        assert _get(base + "run/guarded-run", Authorization="Bearer wrong-token-wrong-token")[0] == 401
        assert _get(base + "?token=wrong")[0] == 401
        assert _get(base + "run/guarded-run", Authorization=f"Bearer {TOKEN}")[0] == 200
        browser.delete_all_cookies()
        browser.get(base + f"?token={TOKEN}")  # the token becomes a cookie and leaves the address bar
        wait_for(lambda: "guarded-run" in browser.find_element("tag name", "body").text, "the runs list")
        assert "token" not in browser.current_url
        browser.get(base + "run/guarded-run")
        # Polled, as every page check here: once, under load, the title read straight after the
        # navigation was still empty (a CI run). A page that is not the run's fails all the same.
        try:
            wait_for(lambda: "guarded-run" in browser.title, "the run page's title")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the page: {browser.page_source[:2000]}") from None


def test_loopback_answers_only_localhost_names_with_strict_headers(backend):
    RunWriter(backend.store, "r2")
    with serve_ui(backend.db) as url:
        status, _, headers = _get(url)
        assert status == 200
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        port = url.rsplit(":", 1)[1].strip("/")
        assert _get(url, Host=f"attacker.example:{port}")[0] == 403  # DNS rebinding
        assert _get(url, Host=f"localhost:{port}")[0] == 200


def test_the_ui_cannot_write_to_the_store(backend):
    run = RunWriter(backend.store, "ro-run")
    run.solution("s1", "print(1)\n")
    source = SQLiteSource(Path(backend.db)) if backend.name == "sqlite" else PostgresSource(backend.db)
    try:
        with pytest.raises(Exception, match="(?i)read-?only"):  # the connection itself refuses writes
            source._conn.execute("DELETE FROM events")
        assert [e.seq for e in source.read("ro-run")] == [1, 2, 3]
        with pytest.raises(StoreError, match="no run"):
            source.read("missing")
    finally:
        source.close()
    with serve_ui(backend.db) as url:  # pages served; the log is what the writer wrote
        for path in ("", "run/ro-run", "run/ro-run/solution/s1", "run/ro-run/events", "campaigns"):
            assert _get(url + path)[0] == 200, path
    assert backend.store.last_seq("ro-run") == 3


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("127.0.0.2", True), ("localhost", True),
                                           ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                           ("192.168.1.20", False), ("example.org", False)])
def test_which_addresses_are_loopback(host, loopback):
    assert is_loopback(host) is loopback
    if loopback:
        check_bind(host, None)  # nothing needed
    else:
        with pytest.raises(BindRefused, match="without a token"):
            check_bind(host, None)
        with pytest.raises(BindRefused, match="at least 16 characters"):
            check_bind(host, "short")
        check_bind(host, TOKEN)
