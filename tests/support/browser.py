"""Debian's headless chromium, driven by its own chromedriver (selenium), for the web UI's tests.

Names under `.test` resolve to loopback in the browser as in the fetcher (dns_overrides), so a
card's image loads from the test's own sites. Calls block, so tests run them in a thread
(`await browser.run(fn, ...)`); waits poll the page with a timeout, never a fixed sleep.
Screenshots and DOM dumps go to the test's directory, and to $SPIDERDUCK_SCREENSHOTS as well
when it is set (the README's screenshot is taken that way)."""
from __future__ import annotations

import asyncio
import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")


def skip_without_chromium() -> None:
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("Debian's chromium and chromium-driver are not installed (bin/test installs them)")


class Browser:
    def __init__(self, out_dir):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1200,1000", "--host-resolver-rules=MAP *.test 127.0.0.1",
                    "--disable-extensions", "--no-first-run"):
            options.add_argument(arg)
        self.driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
        self.driver.set_page_load_timeout(30)
        self.out_dir = out_dir

    async def run(self, fn, *args):
        return await asyncio.to_thread(fn, *args)

    async def open(self, url: str) -> None:
        await self.run(self.driver.get, url)

    async def text(self, css: str) -> str:
        """What a person reads in the element (its rendered text)."""
        return await self.run(lambda: self.driver.find_element("css selector", css).text)

    async def texts(self, css: str) -> list[str]:
        return await self.run(lambda: [e.text for e in self.driver.find_elements("css selector", css)])

    async def script(self, source: str, *args):
        return await self.run(self.driver.execute_script, source, *args)

    async def wait_for(self, predicate, timeout: float = 20.0, what: str = "the page"):
        """Poll `predicate(driver)` (in the thread) until truthy; its value."""
        from selenium.webdriver.support.ui import WebDriverWait

        def wait():
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(
                predicate, message=f"waited {timeout}s for {what}")
        return await self.run(wait)

    async def wait_text(self, css: str, wanted: str, timeout: float = 20.0) -> str:
        def has(driver):
            found = [e.text for e in driver.find_elements("css selector", css)]
            return next((t for t in found if wanted in t), None)
        return await self.wait_for(has, timeout, f"{wanted!r} in {css}")

    async def capture(self, name: str) -> str:
        """Screenshot (PNG) and DOM dump of the page; the screenshot's path."""
        def capture():
            png = self.driver.get_screenshot_as_png()
            dom = self.driver.execute_script("return document.documentElement.outerHTML")
            dirs = [self.out_dir] + ([os.environ["SPIDERDUCK_SCREENSHOTS"]]
                                     if os.environ.get("SPIDERDUCK_SCREENSHOTS") else [])
            for d in dirs:
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, f"{name}.png"), "wb") as fh:
                    fh.write(png)
                with open(os.path.join(d, f"{name}.html"), "w", encoding="utf-8") as fh:
                    fh.write(dom)
            return os.path.join(self.out_dir, f"{name}.png")
        return await self.run(capture)

    def alert_open(self) -> bool:
        from selenium.common.exceptions import NoAlertPresentException
        try:
            self.driver.switch_to.alert
        except NoAlertPresentException:
            return False
        return True

    def quit(self) -> None:
        self.driver.quit()
