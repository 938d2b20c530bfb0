"""The fault suite for `treegram serve` (issue 27, security): raw HTTP requests over a real socket against a server
started in a thread on a free loopback port -- foreign Host headers (DNS rebinding), cross-origin and token-less
POSTs, malformed and oversize bodies, static paths, guessable sheet ids -- and the `--port` range.

Each case is tallied as in test_fault_suite.py: a refusal with the expected status is a clean error; a 5xx, a
traceback in the server's log or in the answer is a traceback; a refused request that still changed the sheets in
memory destroyed the teacher's input; a request that should be refused but was answered (or an answer without
the security headers, or a refusal that shows the page's token) is a silent wrong output.  `test_summary` prints
the counts.
"""

from __future__ import annotations

import logging
import os
import re
import socket
from urllib.parse import urlencode
from dataclasses import dataclass

import pytest

from faults import new_tally, summary
from test_vocabgen_serve import CORPUS, VOCAB, running
from treegram.plugins.vocabgen.model import VocabgenModel
from treegram.plugins.vocabgen.serve import MAX_BODY, SECURITY_HEADERS, Workbench, make_server, vocab_choices

TALLY = new_tally("silent_wrong")
FORM = "application/x-www-form-urlencoded"
FAILURES: list[str] = []


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


class _Log(logging.Handler):
    """Every record the server logs with a traceback (Flask's "Exception on /sheet", werkzeug's "Error on
    request").  werkzeug's one-line "code 400, message Bad request syntax" is not one."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.bad: list[str] = []

    def emit(self, record):
        text = record.getMessage()
        if record.exc_info or "Traceback" in text or "Error on request" in text or "Exception on" in text:
            self.bad.append(text)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("serve-faults")
    (d / "static").mkdir()
    (d / "static" / "secret.txt").write_text("the teacher's secret\n")
    (d / "secret.txt").write_text("another secret\n")
    log = _Log()
    logging.getLogger().addHandler(log)
    old = os.getcwd()
    os.chdir(d)  # serve started in a folder with ./static: Flask's default would serve it
    try:
        # translate items from corpus sentences only: the quickest sheet to make (the browser test makes cloze)
        bench = Workbench(VocabgenModel.train(CORPUS * 2), vocab_choices(VOCAB))
        srv = make_server(bench, "127.0.0.1", 0)
        handle_error = srv.handle_error

        def count_handler_error(request, address):  # socketserver prints these tracebacks to stderr itself
            log.bad.append(f"handler error for {address}")
            handle_error(request, address)

        srv.handle_error = count_handler_error
        with running(srv):
            port = srv.port
            page = send(port, f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            token = re.search(rb'name="csrf" value="([^"]+)"', page.body)
            token = token.group(1).decode() if token else ""  # "": a page without a token (main before issue 27)
            yield {"bench": bench, "port": port, "token": token, "log": log, "dir": d}
    finally:
        os.chdir(old)
        logging.getLogger().removeHandler(log)


def send(port: int, data: bytes) -> Reply:
    """One raw request on a fresh connection, then the end of what the client sends (which also ends a body cut
    short); the whole answer (the server closes every connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    if not out.startswith(b"HTTP/"):  # http.server answers a request line without a version as HTTP/0.9: no head
        code = re.search(rb"Error code: (\d+)", out)
        return Reply(int(code.group(1)) if code else 0, {}, out)
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    if "chunked" in headers.get("transfer-encoding", ""):
        body = _dechunk(body)
    return Reply(int(lines[0].split()[1]), headers, body)


def _dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size, _, rest = data.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            break
        out, data = out + rest[:n], rest[n + 2:]
    return out


def request(w, method: str, path: str, *, host: str | None = "own", headers: dict | None = None,
            body: bytes | None = None, chunked: bytes | None = None) -> bytes:
    """A raw HTTP/1.1 request: `host` "own" = 127.0.0.1:PORT, None = no Host header; `chunked` = a raw body sent
    with Transfer-Encoding: chunked, as is."""
    lines = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {'127.0.0.1:%d' % w['port'] if host == 'own' else host}")
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body is not None:
        lines += [f"Content-Type: {FORM}", f"Content-Length: {len(body)}"]
    if chunked is not None:
        lines += [f"Content-Type: {FORM}", "Transfer-Encoding: chunked"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"") + (chunked or b"")


def form(w, token: str | None = "own", **fields) -> bytes:
    values = {"vocab": VOCAB, "words": "cat", "kind": "translate", "count": "1", "seed": "0", **fields}
    if token is not None:
        values["csrf"] = w["token"] if token == "own" else token
    return urlencode(values).encode()


def state(bench) -> dict:
    """The teacher's work in memory: every sheet and its items."""
    return {sid: tuple((i.number, i.sentence) for i in e["sheet"].items) for sid, e in bench.sheets.items()}


def run_case(w, name: str, raw: bytes, expect: set[int], *, refused: bool = True, foreign: bool = False,
             from_app: bool = True) -> Reply:
    """Send one case and tally it; anything but the expected, clean answer is recorded in FAILURES (the test fails
    when it ends, after all its cases ran, so that the counts are complete).  `foreign`: the request comes from
    another site (Host, Origin), so its answer must not show the page's token."""
    TALLY["cases"] += 1
    before, logged = state(w["bench"]), len(w["log"].bad)
    reply = send(w["port"], raw)
    wrong = []
    if reply.status not in expect and (not refused or reply.status < 400):
        wrong.append(f"answered {reply.status}, expected {sorted(expect)}")
    if from_app:  # http.server's own 400 for a request line it cannot read never reaches the app
        wrong += [f"no {k} header" for k, v in SECURITY_HEADERS.items() if reply.headers.get(k.lower()) != v]
    if foreign and w["token"] and w["token"].encode() in reply.body:
        wrong.append("the refusal shows the page's token")
    if reply.status == 500 or len(w["log"].bad) > logged or b"Traceback" in reply.body:
        TALLY["tracebacks"] += 1
        FAILURES.append(f"{name}: {reply.status}, a traceback in the server log {w['log'].bad[logged:][:1]}")
    elif refused and state(w["bench"]) != before:
        TALLY["inputs_destroyed"] += 1
        FAILURES.append(f"{name}: a refused request changed the sheets in memory")
    elif wrong:
        TALLY["silent_wrong"] += 1
        FAILURES.append(f"{name}: " + "; ".join(wrong))
    elif reply.status not in expect:
        TALLY["clean_errors"] += 1
        FAILURES.append(f"{name}: refused with {reply.status}, expected {sorted(expect)}")
    else:
        TALLY["ok" if reply.status < 400 else "clean_errors"] += 1
    return reply


@pytest.fixture(autouse=True)
def _cases_pass():
    """Each test fails if any of its cases did (all of them run first)."""
    first = len(FAILURES)
    yield
    assert not FAILURES[first:], "\n".join(FAILURES[first:])


@pytest.fixture(scope="module")
def sheet(w):
    """A sheet made the way the page makes it: its id."""
    reply = run_case(w, "make a sheet", request(w, "POST", "/sheet", body=form(w), headers={
        "Origin": f"http://127.0.0.1:{w['port']}", "Sec-Fetch-Site": "same-origin"}), {200}, refused=False)
    assert len(w["bench"].sheets) == 1, FAILURES
    return next(iter(w["bench"].sheets))


@pytest.fixture(scope="module")
def w(world):
    return world


# -- the teacher's own requests still work ----------------------------------------------------------------------------
def test_own_requests_work(w, sheet):
    port = w["port"]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        run_case(w, f"GET / as {host}", request(w, "GET", "/", host=host), {200}, refused=False)
    run_case(w, "download json", request(w, "GET", f"/sheet/{sheet}/download/json"), {200}, refused=False)
    # no Origin and no Referer (a script, an old browser): the token alone lets it through
    run_case(w, "POST with the token, no Origin", request(w, "POST", "/sheet", body=form(w, words="dog")), {200},
             refused=False)
    # the page's own replace button (the toy model may have no other sentence: then a 400 page that says so)
    run_case(w, "replace item 1", request(w, "POST", f"/sheet/{sheet}/replace/1", body=form(w), headers={
        "Origin": f"http://localhost:{port}", "Referer": f"http://localhost:{port}/sheet"}), {200, 400},
        refused=False)


def test_sheet_ids_are_not_guessable(w, sheet):
    run_case(w, "second sheet", request(w, "POST", "/sheet", body=form(w, words="dog")), {200}, refused=False)
    sid2 = list(w["bench"].sheets)[-1]
    TALLY["cases"] += 1
    if not (re.fullmatch(r"[A-Za-z0-9_-]{22}", sheet) and re.fullmatch(r"[A-Za-z0-9_-]{22}", sid2)
            and sheet != sid2):
        TALLY["silent_wrong"] += 1
        raise AssertionError(f"sheet ids {sheet!r}, {sid2!r} are not 128-bit random")
    TALLY["clean_errors"] += 1
    n = len(w["bench"].sheets)
    for guess in ("s1", "s2", str(n), sheet[:-1] + ("A" if sheet[-1] != "A" else "B")):
        run_case(w, f"download guessed id {guess}", request(w, "GET", f"/sheet/{guess}/download/json"), {404})
        run_case(w, f"replace in guessed id {guess}", request(w, "POST", f"/sheet/{guess}/replace/1",
                                                              body=form(w)), {404})
    run_case(w, "replace a huge item number", request(w, "POST", f"/sheet/{sheet}/replace/{'9' * 5000}",
                                                      body=form(w)), {404})


# -- DNS rebinding: any Host but this server's own is refused ---------------------------------------------------------
def test_foreign_host(w, sheet):
    port = w["port"]
    cases = [("rebinding name", f"evil.example:{port}"), ("rebinding name, no port", "evil.example"),
             ("loopback, another port", f"127.0.0.1:{port + 1 if port < 65535 else 1}"),
             ("loopback, no port", "127.0.0.1"), ("trailing dot", f"localhost.:{port}"),
             ("127.0.0.2", f"127.0.0.2:{port}"), ("user info", f"a@127.0.0.1:{port}"),
             ("two hosts", f"127.0.0.1:{port}, evil.example"), ("empty", "")]
    for name, host in cases:
        run_case(w, f"GET / Host {name}", request(w, "GET", "/", host=host), {400}, foreign=True)
        run_case(w, f"download Host {name}", request(w, "GET", f"/sheet/{sheet}/download/json", host=host), {400},
                 foreign=True)
    run_case(w, "no Host (HTTP/1.0)", b"GET / HTTP/1.0\r\n\r\n", {400}, foreign=True)
    run_case(w, "absolute URL of another host", f"GET http://evil.example:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:"
             f"{port}\r\n\r\n".encode(), {400}, foreign=True)
    run_case(w, "HEAD, foreign Host", request(w, "HEAD", "/", host="evil.example"), {400}, foreign=True)
    run_case(w, "OPTIONS, foreign Host", request(w, "OPTIONS", "/sheet", host="evil.example"), {400}, foreign=True)
    run_case(w, "POST, foreign Host, real token", request(w, "POST", "/sheet", host=f"evil.example:{port}",
                                                          body=form(w)), {400}, foreign=True)
    run_case(w, "duplicate Host headers", request(w, "GET", "/", headers={"Host": "evil.example"}), {400}, foreign=True)


# -- CSRF: another origin cannot post, a post without the token is refused --------------------------------------------
def test_cross_origin_posts(w, sheet):
    port = w["port"]
    make, repl = "/sheet", f"/sheet/{sheet}/replace/1"
    for path in (make, repl):
        for name, headers in [
            ("foreign Origin", {"Origin": "http://evil.example"}),
            ("Origin null", {"Origin": "null"}),
            ("Origin of another local port", {"Origin": f"http://127.0.0.1:{port + 1 if port < 65535 else 1}"}),
            ("Origin https", {"Origin": f"https://127.0.0.1:{port}"}),
            ("Origin rebinding name", {"Origin": f"http://evil.example:{port}"}),
            ("foreign Referer, no Origin", {"Referer": "http://evil.example/page"}),
            ("Referer with our address in the path", {"Referer": f"http://evil.example/127.0.0.1:{port}/"}),
            ("Sec-Fetch-Site cross-site", {"Sec-Fetch-Site": "cross-site"}),
            ("Sec-Fetch-Site same-site", {"Sec-Fetch-Site": "same-site", "Origin": f"http://127.0.0.1:{port}"}),
        ]:
            # the real token: the origin check alone must refuse
            run_case(w, f"POST {path} {name}", request(w, "POST", path, headers=headers, body=form(w)), {403},
                     foreign=True)
        own = {"Origin": f"http://127.0.0.1:{port}"}
        run_case(w, f"POST {path} no token", request(w, "POST", path, headers=own, body=form(w, token=None)), {403})
        run_case(w, f"POST {path} wrong token", request(w, "POST", path, headers=own, body=form(w, token="x" * 43)),
                 {403})
        run_case(w, f"POST {path} empty token", request(w, "POST", path, headers=own, body=form(w, token="")), {403})
        run_case(w, f"POST {path} token in the query only",
                 request(w, "POST", f"{path}?csrf={w['token']}", headers=own, body=form(w, token=None)), {403})
        run_case(w, f"POST {path} non-ASCII token", request(w, "POST", path, headers=own,
                                                            body=form(w, token="é" * 10)), {403})


def test_memory_cannot_be_filled_from_outside(w, sheet):
    """Sixty cross-site posts (more than the 50 sheets kept) leave the teacher's sheets as they were."""
    before = state(w["bench"])
    for k in range(60):
        run_case(w, f"cross-site post {k}", request(w, "POST", "/sheet", headers={"Origin": "http://evil.example"},
                                                    body=form(w, token=None, words="dog")), {403}, foreign=True)
    assert state(w["bench"]) == before and sheet in w["bench"].sheets


# -- bodies the server cannot read ------------------------------------------------------------------------------------
def test_malformed_and_oversize_bodies(w):
    own = {"Origin": f"http://127.0.0.1:{w['port']}"}
    good = form(w)
    chunked = [
        ("bad chunk size", b"zz\r\nabc\r\n0\r\n\r\n"),
        ("negative chunk size", b"-5\r\nabc\r\n0\r\n\r\n"),
        ("chunk longer than its data, then end", b"100\r\nabc"),
        ("chunk without CRLF", b"3\r\nabcdef0\r\n\r\n"),
        ("huge chunk size", b"ffffffffffffffffffffffff\r\nabc\r\n0\r\n\r\n"),
        ("no final chunk", b"%x\r\n" % len(good) + good + b"\r\n"),
    ]
    for name, raw in chunked:
        run_case(w, f"chunked: {name}", request(w, "POST", "/sheet", headers=own, chunked=raw), {400})
    run_case(w, "chunked: a good body", request(w, "POST", "/sheet", headers=own, chunked=b"%x\r\n" % len(good) + good
                                                + b"\r\n0\r\n\r\n"), {200}, refused=False)
    big = b"text=" + b"a" * (MAX_BODY + 10) + b"&csrf=" + w["token"].encode()
    run_case(w, "chunked: over the size limit", request(w, "POST", "/sheet", headers=own, chunked=b"".join(
        b"%x\r\n%s\r\n" % (len(big[k:k + 65536]), big[k:k + 65536]) for k in range(0, len(big), 65536))
        + b"0\r\n\r\n"), {413})
    run_case(w, "Content-Length over the limit (no body sent)",
             request(w, "POST", "/sheet", headers={**own, "Content-Type": FORM, "Content-Length": "99999999"}),
             {413})
    run_case(w, "Content-Length 20 digits", request(w, "POST", "/sheet", headers={
        **own, "Content-Type": FORM, "Content-Length": "9" * 20}), {413})
    run_case(w, "form over the limit", request(w, "POST", "/sheet", headers=own, body=big), {413})
    run_case(w, "Content-Length -5", request(w, "POST", "/sheet", headers={
        **own, "Content-Type": FORM, "Content-Length": "-5"}), {400, 403})
    run_case(w, "Content-Length longer than the body", request(w, "POST", "/sheet", headers={
        **own, "Content-Type": FORM, "Content-Length": "50"}) + b"words=cat", {400, 403})
    run_case(w, "form body not UTF-8", request(w, "POST", "/sheet", headers=own, body=b"words=\xff\xfe&csrf="
                                              + w["token"].encode()), {400})
    run_case(w, "bad percent escapes", request(w, "POST", "/sheet", headers=own, body=form(w, words="%zz%")
                                               .replace(b"%25zz%25", b"%zz%")), {400})
    run_case(w, "percent-encoded bytes that are not UTF-8",
             request(w, "POST", "/sheet", headers=own, body=form(w) + b"&words=%ff%fe"), {200, 400}, refused=False)
    mp = (b"--xx\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n" + w["token"].encode() + b"\r\n--xx")
    run_case(w, "multipart without its end", request(w, "POST", "/sheet", headers={
        **own, "Content-Type": "multipart/form-data; boundary=xx", "Content-Length": str(len(mp))}) + mp,
        {400, 403})
    run_case(w, "multipart without a boundary", request(w, "POST", "/sheet", headers={
        **own, "Content-Type": "multipart/form-data", "Content-Length": "4"}) + b"abcd", {400, 403})
    run_case(w, "a request line http.server cannot read", b"GARBAGE\r\n\r\n", {400}, from_app=False)
    run_case(w, "HTTP/9.9", b"GET / HTTP/9.9\r\n\r\n", {505}, from_app=False)
    run_case(w, "a header line without a colon", request(w, "GET", "/") [:-2] + b"nonsense\r\n\r\n",
             {200, 400}, refused=False, from_app=False)
    run_case(w, "PUT /sheet", request(w, "PUT", "/sheet", headers=own, body=good), {403, 405})
    run_case(w, "DELETE /", request(w, "DELETE", "/", headers=own), {403, 405})


# -- no folder is served ----------------------------------------------------------------------------------------------
def test_no_static_folder(w):
    assert (w["dir"] / "static" / "secret.txt").is_file() and os.getcwd() == str(w["dir"])
    for path in ("/static/secret.txt", "/static/", "/static", "/secret.txt", "/static/../secret.txt",
                 "/static/%2e%2e/secret.txt", "/..%2fsecret.txt", "//static/secret.txt", "/favicon.ico"):
        reply = run_case(w, f"GET {path}", request(w, "GET", path), {404})
        assert b"secret" not in reply.body


# -- the port ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("port, message", [("70000", "not a port number"), ("65536", "not a port number"),
                                           ("99999999999999999999", "not a port number|too large"),
                                           ("-1", "0 or more"), ("abc", "whole number")])
def test_port_range(tmp_path, capsys, port, message):
    from treegram.cli.app import main

    TALLY["cases"] += 1
    try:
        code = main(["serve", "--model", str(tmp_path / "m.model"), "--port", port])
    except SystemExit as exc:  # argparse's usage error: one line, exit 2
        code = exc.code
    except BaseException as exc:
        TALLY["tracebacks"] += 1
        raise AssertionError(f"--port {port}: {type(exc).__name__}: {exc}") from exc
    err = capsys.readouterr().err
    if code != 2 or not re.search(message, err):
        TALLY["silent_wrong"] += 1
        raise AssertionError(f"--port {port}: exit {code}, {err!r}")
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3
    TALLY["clean_errors"] += 1


def test_port_range_in_the_api(w):
    from treegram.errors import InputError

    for port in (-1, 65536, 10**20, "x"):
        TALLY["cases"] += 1
        with pytest.raises(InputError, match="not a port number"):
            make_server(w["bench"], "127.0.0.1", port)
        TALLY["clean_errors"] += 1


def test_summary(capsys):
    """The counts for the closing note (run last in this file)."""
    assert TALLY["cases"] > 0
    summary(TALLY, "serve fault suite", capsys)
