"""The pieces of a browser test: Debian's Chromium driven by Selenium (its own driver,
chromium-driver; nothing downloaded), and `engine ui` started as the user starts it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = ("/usr/bin/chromium", "/usr/lib/chromium/chromium")
DRIVER = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")
WAIT_S = 20.0  # an upper bound for the page to follow the log; the tests never measure speed


def _first(paths: tuple[str, ...], name: str, package: str) -> str:
    found = next((p for p in paths if Path(p).exists()), None) or shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is missing: install the Debian package '{package}' (make test does, as root)")
    return found


def chrome() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _first(CHROMIUM, "chromium", "chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1440,1000", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=_first(DRIVER, "chromedriver",
                                                                                    "chromium-driver")))


def engine_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *args]


def engine_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "ENGINE_LOG_LEVEL": "WARNING"}


@contextmanager
def serve_ui(db: str, *extra: str) -> Iterator[str]:
    """`engine ui --db DB --port 0` in a subprocess; yields the URL it prints; stops it after."""
    proc = subprocess.Popen(engine_cmd("ui", "--db", db, "--port", "0", *extra), stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=engine_env(), cwd=REPO)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.search(r"serving (http://\S+)", line)
        if match is None:
            proc.kill()
            raise AssertionError(f"engine ui did not start: {line}{proc.stderr.read()}")
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for(check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll ``check`` until it returns a truthy value; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # the element is being replaced right now: look again
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def text_of(driver: Any, element_id: str) -> str:
    return str(driver.find_element("id", element_id).text)
