"""`treegram serve` end to end in a real headless browser (Debian's chromium driven by selenium + chromedriver).

One server start on a free loopback port, a few page actions: bad input shown on the page, a sheet made,
one item replaced, every download format fetched, and a screenshot checked (size, not blank, page text) and
saved to benchmarks/out/serve.png for the closing note.  The same browser then visits a page of another origin
that frames the page and posts a form to it (with the real token): the frame stays empty and the post is refused.
Skips with a reason only when chromium is absent.  The raw-HTTP fault cases are in test_fault_serve.py.
"""

from __future__ import annotations

import contextlib
import html
import http.server
import re
import shutil
import struct
import threading
import urllib.error
import urllib.request
import zlib
from pathlib import Path

import pytest
from toy_data import PARK, PETS

from treegram.errors import InputError
from treegram.plugins.vocabgen.model import VocabgenModel
from treegram.plugins.vocabgen.serve import Workbench, check_host, make_server, vocab_choices

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMEDRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists()
                                                else None)
VOCAB = "words:the,dog,cat,bit,likes,me,she,big,dogs,a,saw,park,in"
SCREENSHOT = Path(__file__).resolve().parents[1] / "benchmarks" / "out" / "serve.png"
SIZE = (1280, 900)
# the server is on loopback: never route the test's requests through a proxy from the environment
OPEN = urllib.request.build_opener(urllib.request.ProxyHandler({})).open


CORPUS = PETS + PARK[:2]


def test_serve_binds_loopback_only():
    assert check_host("127.0.0.1") == "127.0.0.1" and check_host("::1") == "::1"
    for host in ("0.0.0.0", "192.168.1.4", "example.org"):
        with pytest.raises(InputError, match="loopback"):
            check_host(host)


def test_words_picked_from_a_pasted_text():
    bench = Workbench(VocabgenModel.train(CORPUS * 2), vocab_choices(VOCAB), allow_unchecked=True)
    gen, vocab = bench.generator(VOCAB)
    text = "The dogs saw a cat. The dog likes the park; the park is big. Zebras were not there."
    # content words the vocabulary and the model know, by frequency (dogs + dog), then first occurrence
    assert bench.pick_words(text, vocab, gen) == ["dog", "park", "saw", "cat", "likes"]
    sid, entry = bench.build({"vocab": VOCAB, "words": "", "text": text, "kind": "cloze", "count": "1"})
    assert {i.word for i in entry["sheet"].items} <= {"dog", "park", "saw", "cat", "likes"}
    assert {"dog", "park"} <= {i.word for i in entry["sheet"].items}
    with pytest.raises(InputError, match="no word of the pasted text"):
        bench.build({"vocab": VOCAB, "text": "Zebras, giraffes!", "kind": "cloze", "count": "1"})


def test_serve_cli_errors(tmp_path, capsys):
    from treegram.cli.app import main

    model = tmp_path / "m.model"
    VocabgenModel.train(CORPUS * 2).save(model)
    assert main(["serve", "--model", str(model), "--host", "0.0.0.0"]) == 2
    assert "loopback" in capsys.readouterr().err
    assert main(["serve", "--model", str(model), "--vocab", "cefr:Q1"]) == 2
    assert "unknown CEFR level" in capsys.readouterr().err
    assert main(["serve", "--model", str(tmp_path / "none.model")]) == 2
    assert "model file not found" in capsys.readouterr().err


def _png_info(data: bytes) -> tuple[int, int, int]:
    """(width, height, number of distinct byte values in the decompressed image data) of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return width, height, len(set(zlib.decompress(idat)))


@contextlib.contextmanager
def running(srv):
    """Serve `srv` (a `make_server` or http.server server) in a thread for the duration of the block."""
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=10)


def page_token(base: str) -> str:
    """The per-server token of the page's forms, read the way a browser gets it: from the page."""
    with OPEN(base + "/", timeout=30) as resp:
        return re.search(r'name="csrf" value="([^"]+)"', resp.read().decode()).group(1)


@pytest.fixture(scope="module")
def bench():
    return Workbench(VocabgenModel.train(CORPUS * 2), vocab_choices(VOCAB), allow_unchecked=True)


@pytest.fixture(scope="module")
def server(bench):
    with running(make_server(bench, "127.0.0.1", 0)) as srv:
        yield f"http://127.0.0.1:{srv.port}"


def _attacker(target: str, token: str, vocab: str):
    """Another origin's page (a second loopback port): it frames the page and posts a form to it."""
    e = html.escape
    body = (f'<!DOCTYPE html><html><body><h1>elsewhere</h1><iframe id="frame" src="{e(target)}/"></iframe>'
            f'<form method="post" action="{e(target)}/sheet">'
            + "".join(f'<input type="hidden" name="{k}" value="{e(v)}">' for k, v in
                      (("vocab", vocab), ("words", "cat"), ("kind", "cloze"), ("count", "1"), ("csrf", token)))
            + '<button id="go" type="submit">go</button></form></body></html>').encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)


def test_serve_in_a_real_browser(server, bench):
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("chromium / chromedriver not installed (apt-get install chromium chromium-driver; .ci/run does)")
    selenium = pytest.importorskip("selenium", reason="selenium is in the test extra")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from selenium.common.exceptions import WebDriverException

    def submit(button) -> None:
        """Click a submit button and wait until the next page has replaced this one."""
        page = driver.find_element(By.TAG_NAME, "html")
        button.click()

        def replaced(_driver) -> bool:
            try:
                return EC.staleness_of(page)(_driver)
            except WebDriverException as exc:  # Chrome may say "does not belong to the document": also gone
                if "does not belong to the document" in str(exc):
                    return True
                raise

        WebDriverWait(driver, 60).until(replaced)

    assert selenium
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # to see Content-Security-Policy reports
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                "--no-proxy-server",
                f"--window-size={SIZE[0]},{SIZE[1]}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    try:
        driver.set_page_load_timeout(30)
        driver.get(server + "/")
        assert "treegram exercises" in driver.title
        # the page's style block runs under its Content-Security-Policy (allowed by hash)
        assert driver.find_element(By.TAG_NAME, "header").value_of_css_property("background-color") in (
            "rgba(31, 78, 121, 1)", "rgb(31, 78, 121)")

        # bad input: a message on the page, not a traceback
        driver.find_element(By.ID, "words").send_keys("zebra")
        submit(driver.find_element(By.ID, "make"))
        error = driver.find_element(By.ID, "error").text
        assert "no sentence for any of the words" in error and "Traceback" not in driver.page_source

        # multiple choice for two words: the toy vocabulary has no option that cannot fit ("the dog / cat bit
        # me"), so the page says why there is no sheet
        words = driver.find_element(By.ID, "words")
        words.clear()
        words.send_keys("cat, dog")
        Select(driver.find_element(By.ID, "kind")).select_by_value("choice")
        count = driver.find_element(By.ID, "count")
        count.clear()
        count.send_keys("2")
        submit(driver.find_element(By.ID, "make"))
        error = driver.find_element(By.ID, "error").text
        assert "no exercise could be built" in error and "Traceback" not in driver.page_source

        # a cloze sheet with lemma hints for the same words
        Select(driver.find_element(By.ID, "kind")).select_by_value("cloze")
        hints = driver.find_element(By.CSS_SELECTOR, "input[name=hints]")
        if not hints.is_selected():
            hints.click()
        submit(driver.find_element(By.ID, "make"))
        items = driver.find_elements(By.CSS_SELECTOR, "ol.items li")
        assert len(items) == 4
        assert all("_____" in li.text for li in items)
        assert "Answer key" in driver.find_element(By.ID, "preview").text
        before = items[0].text

        # replace one item: another sentence for the same word, the others unchanged
        others = [li.text for li in items[1:]]
        submit(driver.find_element(By.ID, "replace-1"))
        msg = driver.find_elements(By.ID, "message")
        err = driver.find_elements(By.ID, "error")
        assert msg or err
        items = driver.find_elements(By.CSS_SELECTOR, "ol.items li")
        assert [li.text for li in items[1:]] == others
        if msg:
            assert "item 1 replaced" in msg[0].text and items[0].text != before
        else:  # the toy model may have no other sentence for that word: the page says so
            assert "no other sentence" in err[0].text

        # downloads in every format, at an address no other page can guess
        links = {a.get_attribute("id")[3:]: a.get_attribute("href")
                 for a in driver.find_elements(By.CSS_SELECTOR, "#downloads a")}
        # every registered export format (the built-in seven, and a plugin's: CI installs the example's csv)
        from treegram.exercises import export_formats

        assert set(links) == set(export_formats()) >= {"md", "html", "pdf", "gift", "moodle-xml", "anki", "json"}
        sid = re.search(r"/sheet/([^/]+)/download/", links["json"]).group(1)
        assert sid in bench.sheets and re.fullmatch(r"[A-Za-z0-9_-]{20,}", sid)
        magic = {"pdf": b"%PDF", "anki": b"PK", "json": b"{", "html": b"<!DOCTYPE", "moodle-xml": b"<?xml"}
        for fmt, href in links.items():
            with OPEN(href, timeout=30) as resp:
                data = resp.read()
                assert resp.status == 200 and "attachment" in resp.headers["Content-Disposition"]
            assert data.startswith(magic.get(fmt, b"")) and len(data) > 50, fmt

        # the screenshot: expected size, not blank, and the page's text is there
        png = driver.get_screenshot_as_png()
        width, height, distinct = _png_info(png)
        assert width == SIZE[0] and 500 <= height <= SIZE[1]  # the viewport: the window less its frame
        assert distinct > 20 and len(png) > 20_000
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        SCREENSHOT.write_bytes(png)
        assert "Fill in the blanks" in driver.find_element(By.TAG_NAME, "body").text
        csp = [m for m in driver.get_log("browser") if "Content Security Policy" in m.get("message", "")]
        assert not csp, csp

        # another origin: its frame of the page stays empty, its form post (even with the real token) is refused
        sheets = dict(bench.sheets)
        with running(_attacker(server, page_token(server), VOCAB)) as evil:
            driver.get(f"http://127.0.0.1:{evil.server_address[1]}/")
            driver.switch_to.frame(driver.find_element(By.ID, "frame"))
            assert not driver.find_elements(By.ID, "settings")
            driver.switch_to.default_content()
            submit(driver.find_element(By.ID, "go"))
            assert "refused" in driver.find_element(By.TAG_NAME, "body").text
        assert dict(bench.sheets) == sheets
    finally:
        driver.quit()


def test_serve_http_errors(server):
    """Bad form values come back as 400 pages with the message; an unknown sheet is a 404 page."""
    token = page_token(server)
    data = f"vocab=cefr%3AQ9&words=cat&kind=cloze&count=3&seed=0&csrf={token}".encode()
    with pytest.raises(urllib.error.HTTPError) as exc:
        OPEN(urllib.request.Request(server + "/sheet", data=data), timeout=30)
    assert exc.value.code == 400 and b"unknown vocabulary" in exc.value.read()
    data = f"vocab={VOCAB}&words=cat&kind=cloze&count=999&seed=0&csrf={token}".encode()
    with pytest.raises(urllib.error.HTTPError) as exc:
        OPEN(urllib.request.Request(server + "/sheet", data=data), timeout=30)
    assert exc.value.code == 400 and b"out of range" in exc.value.read()
    with pytest.raises(urllib.error.HTTPError) as exc:
        OPEN(server + "/sheet/s999/download/pdf", timeout=30)
    assert exc.value.code == 404
