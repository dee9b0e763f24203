"""Pages opened in a real browser: Debian's Chromium driven by chromedriver (selenium), headless, for the tests that
look at what course staff open (the class report)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


@contextlib.contextmanager
def chromium() -> Iterator:
    """A headless Chromium (a selenium driver) that keeps its browser log; the test skips, saying how to install it,
    where Chromium is not installed."""
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.skip("Chromium is not installed: `apt-get install -y chromium chromium-driver` (make test does this "
                    "when it runs as root); the report is still written and tested above")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,900"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Chromium driven by chromedriver leaves a folder with its singleton socket in its TMPDIR (38 in this machine's
    # /tmp, 2026-11-26): a folder of ours, short (a socket's path has at most 107 bytes), removed after.
    browser_tmp = tempfile.mkdtemp(prefix="chromium-")
    before = set(Path(tempfile.gettempdir()).glob("org.chromium.*"))
    service = Service(str(CHROMEDRIVER), env={**os.environ, "TMPDIR": browser_tmp})
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(browser_tmp)
    assert set(Path(tempfile.gettempdir()).glob("org.chromium.*")) == before
