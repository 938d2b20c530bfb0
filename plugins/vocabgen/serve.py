"""`treegram serve`: a small local web page for teachers (Flask, bound to a loopback address only).

One page: choose the vocabulary level, the words to practise (or paste a text and let the page pick its content
words that the vocabulary knows), the kind of exercise and how many sentences per word; the preview shows the
sheet and its key, each item can be replaced by another sentence for the same word, and the sheet downloads in
every format of `formats.py`.  Bad input is shown as a message on the page (HTTP 400), never as a traceback.

The sentences come from `selection.select_sentences` and the items from `exercises.make_sheet`, exactly as for
`treegram exercises`; sheets live in memory (the last `MAX_SHEETS`) for replacing and downloading.

The page has no login, so no other web site may drive it (issue 27); `create_app` / `make_server` enforce:

- loopback only: `check_host` refuses any other bind address; `check_port` any port outside 0-65535 (0 = a free
  one);
- a Host allow-list (`allowed_hosts`: 127.0.0.1, localhost, [::1] and the bound address, each with the bound
  port): any other Host header is a 400, so a DNS-rebinding page cannot read the sheets;
- every POST (make a sheet, replace an item) needs the per-server random token of the page's forms (`csrf`) and,
  when the browser sends one, an Origin (else Referer) of this server and no cross-site `Sec-Fetch-Site`; anything
  else is a 403 page that names neither the token nor a sheet;
- sheet ids are random (`secrets.token_urlsafe`), not a counter, so they cannot be guessed;
- no static folder (Flask's default would serve `./static/` of the folder `serve` started in);
- security headers on every response (`SECURITY_HEADERS`: no framing, a Content-Security-Policy that allows the
  page's own style block by its hash and nothing else -- the page has no script --, nosniff, same-origin
  referrers and resource policy);
- request bodies are capped (`MAX_BODY`, 413), and a body that cannot be read (malformed chunked encoding, bytes
  that are not UTF-8) is a 400, never a 500 with a traceback in the log.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import io
import ipaddress
import re
import secrets
import threading
from collections import Counter, OrderedDict
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from treegram.errors import InputError, TreegramError

from treegram.exercises import exercise_kinds, export_formats, get_format
from treegram.plugins.vocabgen.exercises import Sheet, lemma_of, make_item, make_sheet
from treegram.plugins.vocabgen.formats import LETTERS, html_body, render

LEVELS = ("A1", "A2", "B1", "B2", "C1", "C2")
MAX_SHEETS = 50
MAX_PER_WORD = 20
MAX_WORDS = 12
PICK_FROM_TEXT = 5
#: request bodies above this are refused (413): the form is a few fields and a pasted text (20,000 characters used)
MAX_BODY = 256 * 1024
#: the names a browser on this machine may use for the server (with the port; `allowed_hosts`)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def check_host(host: str) -> str:
    """Only loopback addresses: the page has no login, so it must not be reachable from the network."""
    if host == "localhost":
        return host
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise InputError(f"--host {host}: treegram serve binds a loopback address only",
                     hint="use 127.0.0.1 (the default), ::1 or localhost")


def check_port(port) -> int:
    """A TCP port number, 0-65535 (0 = any free port); anything else is one error, not a wrapped or overflowing bind."""
    try:
        n = int(port)
    except (TypeError, ValueError):
        n = -1
    if not 0 <= n <= 65535:
        raise InputError(f"--port {port}: not a port number", hint="give 1-65535, or 0 for any free port")
    return n


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The Host headers the page answers: the loopback names and the bound address, with the bound port (and
    without it on port 80, where browsers leave it out).  Anything else -- a DNS-rebinding name above all -- is
    refused."""
    names = {n.lower() for n in LOOPBACK_NAMES}
    try:
        ip = ipaddress.ip_address(host)
        names.add(f"[{ip.compressed}]" if ip.version == 6 else ip.compressed)
    except ValueError:
        names.add(host.lower())
    hosts = {f"{n}:{port}" for n in names}
    return frozenset(hosts | names if port == 80 else hosts)


class Workbench:
    """The state behind the page: the model, one generator per vocabulary, the recent sheets."""

    def __init__(self, model, vocab_specs: list[str], ui=None, *, allow_unchecked: bool = False):
        self.model = model
        #: generated sentences below the plausibility threshold may fill a short word (marked in the key)
        self.allow_unchecked = allow_unchecked
        self.vocab_specs = vocab_specs
        self.ui = ui
        self._gens: dict[str, tuple] = {}
        self.sheets: OrderedDict[str, dict] = OrderedDict()
        self._next = 0
        self.lock = threading.Lock()

    def generator(self, spec: str):
        from treegram.plugins.vocabgen.generator import ConstrainedGenerator
        from treegram.plugins.vocabgen.vocab import parse_vocab_spec

        if spec not in self.vocab_specs:
            raise InputError(f"unknown vocabulary {spec!r}", hint="choose one from the list")
        if spec not in self._gens:
            vocab = parse_vocab_spec(spec)
            self._gens[spec] = (ConstrainedGenerator(self.model.generation, self.model.system, vocab), vocab)
        return self._gens[spec]

    def pick_words(self, text: str, vocab, gen) -> list[str]:
        """Content words of a pasted text that the vocabulary and the model know, most frequent first."""
        from treegram.plugins.vocabgen.exercises import _function_words

        from treegram.plugins.vocabgen.analysis import _nlp

        counts: Counter[str] = Counter()
        first: dict[str, int] = {}
        known = gen.base.word_index
        nlp = _nlp()
        if nlp is not None:  # tagged, so that "lives" is the verb live, not the noun life
            tagged = [(t.text, t.tag_) for t in nlp(text[:20000]) if _TOKEN.fullmatch(t.text)]
        else:
            tagged = [(t, None) for t in _TOKEN.findall(text)]
        for k, (tok, tag) in enumerate(tagged):
            form = tok.lower()
            # the lemma where the vocabulary and the model know it, else the form as written
            w = next((c for c in (lemma_of(form, None, tag), form)
                      if len(c) >= 3 and c not in _function_words() and c in vocab and c in known), None)
            if w is None:
                continue
            counts[w] += 1
            first.setdefault(w, k)
        return sorted(counts, key=lambda w: (-counts[w], first[w]))[:PICK_FROM_TEXT]

    def build(self, form) -> tuple[str, dict]:
        from treegram.plugins.vocabgen.selection import select_sentences

        spec = (form.get("vocab") or "").strip()
        kind = (form.get("kind") or "cloze").strip()
        if kind not in exercise_kinds():
            raise InputError(f"unknown exercise kind {kind!r}", hint="choose one from the list")
        per_word = _int(form.get("count"), "sentences per word", 1, MAX_PER_WORD)
        seed = _int(form.get("seed") or "0", "seed", 0, 2**31 - 1)
        hints = bool(form.get("hints"))
        gen, vocab = self.generator(spec)
        words = [w.strip().lower() for w in re.split(r"[,\s]+", form.get("words") or "") if w.strip()]
        text = (form.get("text") or "").strip()
        if not words and text:
            words = self.pick_words(text, vocab, gen)
            if not words:
                raise InputError("no word of the pasted text is a content word of this vocabulary",
                                 hint="paste a longer text, choose a higher level, or type the words")
        if not words:
            raise InputError("no words to practise", hint="type some words (e.g. school, book) or paste a text")
        bad = [w for w in words if not _TOKEN.fullmatch(w)]
        if bad:
            raise InputError(f"not a word: {', '.join(bad[:5])}", hint="words are letters (and ' or -) only")
        if len(words) > MAX_WORDS:
            raise InputError(f"{len(words)} words: at most {MAX_WORDS} per sheet", hint="make two sheets")
        if spec.startswith("cefr:") and not text:  # typed words above the level: say so before any work
            from treegram.plugins.vocabgen.vocab import practice_word_problems

            above = practice_word_problems(words, vocab)
            if above:
                raise InputError("; ".join(above), hint="leave them out or choose a higher level")
        rng = np.random.default_rng(seed)
        from treegram.plugins.vocabgen.selection import spare_factor

        spare = spare_factor(kind, hints, None)
        groups, problems = select_sentences(gen, words, min(per_word * spare, max(MAX_PER_WORD, per_word)), rng,
                                            allow_unchecked=self.allow_unchecked)
        if spare > 1:
            problems = [p for p in problems if "different sentence(s)" not in p]
        if not groups:
            raise InputError("no sentence for any of the words", hint="; ".join(problems)[:300])
        sheet = make_sheet(groups, kind, rng, vocab, hints=hints, notes=problems, per_word=per_word)
        settings = {"vocab": spec, "kind": kind, "count": per_word, "seed": seed, "hints": hints,
                    "words": ", ".join(words), "text": text}
        sid = secrets.token_urlsafe(16)  # 128 random bits: no page can guess another sheet's address
        with self.lock:
            self._next += 1
            entry = {"sheet": sheet, "settings": settings, "replaced": 0, "number": self._next}
            self.sheets[sid] = entry
            while len(self.sheets) > MAX_SHEETS:
                self.sheets.popitem(last=False)
        return sid, entry

    def get(self, sid: str) -> dict:
        entry = self.sheets.get(sid)
        if entry is None:
            raise InputError("this sheet is no longer in memory", hint="make the sheet again")
        return entry

    def replace(self, sid: str, number: int) -> str:
        """Replace item `number` by an item on another sentence for the same word; returns a message."""
        from treegram.plugins.vocabgen.selection import select_sentences

        entry = self.get(sid)
        sheet: Sheet = entry["sheet"]
        old = next((i for i in sheet.items if i.number == number), None)
        if old is None:
            raise InputError(f"no item {number} on this sheet", hint="reload the page")
        gen, vocab = self.generator(entry["settings"]["vocab"])
        shown = {i.sentence for i in sheet.items}
        entry["replaced"] += 1
        rng = np.random.default_rng([entry["settings"]["seed"], number, entry["replaced"]])
        want = sum(1 for i in sheet.items if i.word == old.word) + 4
        groups, _ = select_sentences(gen, [old.word], want, rng)
        for s in groups.get(old.word, []):
            if s.text in shown:
                continue
            item = make_item(s, old.word, old.kind, rng, vocab, hints=entry["settings"]["hints"], focus=old.focus)
            if item is not None:
                entry["sheet"] = sheet.replace(number, item)
                return f"item {number} replaced"
        raise InputError(f"no other sentence for {old.word!r} under this vocabulary",
                         hint="keep this item or choose another word")


def _int(value, name: str, lo: int, hi: int) -> int:
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        raise InputError(f"{name}: {value!r} is not a whole number", hint=f"give a number from {lo} to {hi}") from None
    if not lo <= n <= hi:
        raise InputError(f"{name}: {n} is out of range", hint=f"give a number from {lo} to {hi}")
    return n


# -- the page -----------------------------------------------------------------------------------------------------
_CSS = """
body{font-family:Arial,"Noto Sans","Noto Sans CJK JP",sans-serif;margin:0;background:#f4f5f7;color:#111}
header{background:#1f4e79;color:#fff;padding:.8em 1.5em} header h1{margin:0;font-size:1.3em}
main{display:flex;gap:1.5em;padding:1.2em 1.5em;align-items:flex-start}
form.settings{background:#fff;padding:1em 1.2em;border-radius:6px;min-width:19em;box-shadow:0 1px 3px #0002}
form.settings label{display:block;margin:.6em 0 .2em;font-weight:bold;font-size:.9em}
form.settings input[type=text],form.settings select,form.settings textarea,form.settings input[type=number]{
width:100%;box-sizing:border-box;padding:.35em;font-size:1em}
button{background:#1f4e79;color:#fff;border:0;border-radius:4px;padding:.45em 1em;font-size:1em;cursor:pointer;
margin-top:.8em} button.small{font-size:.75em;padding:.15em .5em;margin:0 0 0 .6em;background:#777}
.preview{background:#fff;padding:1em 1.5em;border-radius:6px;flex:1;box-shadow:0 1px 3px #0002}
.error{background:#fde2e1;color:#8a1c16;border:1px solid #e8a39e;padding:.6em .9em;border-radius:4px}
.message{background:#e3f2e1;border:1px solid #9fd19a;padding:.5em .9em;border-radius:4px}
.notes{color:#7a5b00;font-size:.9em} .downloads a{margin-right:.8em}
.tile{display:inline-block;border:1px solid #444;border-radius:4px;padding:0 .45em;margin:.1em .25em .1em 0}
.choices{display:block;margin-left:1em} .choices span{margin-right:1.4em} ol.items li{margin:.5em 0}
.source{color:#666;font-size:.85em} .key{border-top:2px solid #ccc;margin-top:1.5em} form.inline{display:inline}
"""
#: sent with every response.  The page's only style is the `<style>` block above, allowed by its hash; the page has
#: no script, so none runs; forms post only to this server; no other page may frame it or load its files.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'sha256-" + base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()
        + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # same-origin: our own forms still send Origin/Referer (checked on POST); other sites learn nothing
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def _page(bench: Workbench, settings: dict | None = None, sid: str | None = None, error: str | None = None,
          message: str | None = None, *, token: str = "") -> str:
    e = html.escape
    csrf = f'<input type="hidden" name="csrf" value="{e(token)}">'
    s = {"vocab": bench.vocab_specs[0], "kind": "cloze", "count": 3, "seed": 0, "hints": False, "words": "",
         "text": "", **(settings or {})}
    opts = "".join(f'<option value="{e(v)}"{" selected" if v == s["vocab"] else ""}>{e(_vocab_label(v))}</option>'
                   for v in bench.vocab_specs)
    kinds = "".join(f'<option value="{k}"{" selected" if k == s["kind"] else ""}>{e(spec.title)}</option>'
                    for k, spec in exercise_kinds().items())
    form = f"""<form class="settings" method="post" action="/sheet" id="settings">{csrf}
<label for="vocab">Level / vocabulary</label><select name="vocab" id="vocab">{opts}</select>
<label for="words">Words to practise (comma separated)</label>
<input type="text" name="words" id="words" value="{e(str(s['words']))}" placeholder="school, book, family">
<label for="text">… or paste a text to pick words from</label>
<textarea name="text" id="text" rows="4">{e(str(s['text']))}</textarea>
<label for="kind">Exercise</label><select name="kind" id="kind">{kinds}</select>
<label><input type="checkbox" name="hints" value="1"{" checked" if s['hints'] else ""}> lemma hints (cloze)</label>
<label for="count">Sentences per word</label>
<input type="number" name="count" id="count" min="1" max="{MAX_PER_WORD}" value="{e(str(s['count']))}">
<label for="seed">Seed</label><input type="number" name="seed" id="seed" min="0" value="{e(str(s['seed']))}">
<button type="submit" id="make">Make the sheet</button></form>"""
    right = []
    if error:
        right.append(f'<p class="error" id="error" role="alert">{e(error)}</p>')
    if message:
        right.append(f'<p class="message" id="message">{e(message)}</p>')
    if sid is not None:
        entry = bench.sheets[sid]
        sheet: Sheet = entry["sheet"]
        right.append('<p class="downloads" id="downloads">Download: ' + "".join(
            f'<a href="/sheet/{sid}/download/{f}" id="dl-{f}">{f}</a>' for f in export_formats()) + "</p>")
        if sheet.notes:
            right.append('<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in sheet.notes) + "</ul>")
        right.append(_preview(sheet, sid, csrf))
    elif not error:
        right.append("<p>Choose a level and words, then <b>Make the sheet</b>.</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>treegram exercises</title>"
            f"<style>{_CSS}</style></head><body><header><h1>treegram · exercise sheets</h1></header><main>"
            + form + '<section class="preview" id="preview">' + "\n".join(right) + "</section></main></body></html>")


def _vocab_label(spec: str) -> str:
    return f"CEFR {spec[5:]}" if spec.lower().startswith("cefr:") else spec


def _preview(sheet: Sheet, sid: str, csrf: str = "") -> str:
    e = html.escape
    body = html_body(sheet, key=True)
    # a replace button after every item of the sheet part (the key follows in its own section)
    sheet_part, _, key_part = body.partition('<section class="key">')
    for i in sheet.items:
        button = (f'<form method="post" action="/sheet/{sid}/replace/{i.number}" class="inline">{csrf}'
                  f'<button class="small" type="submit" id="replace-{i.number}" title="another sentence for '
                  f'{e(i.word)}">replace</button></form>')
        sheet_part = sheet_part.replace(f'data-item="{i.number}">', f'data-item="{i.number}">{button} ', 1)
    return sheet_part + ('<section class="key">' + key_part if key_part else "")


def _whole_chunked_body(wsgi_app):
    """WSGI middleware: read a chunked request body whole (at most `MAX_BODY` bytes) before the app sees it.

    werkzeug's server hands the app a chunked body as a stream; past `MAX_CONTENT_LENGTH` such a stream just ends
    (the form would be parsed from a silently truncated body), and a malformed chunk fails in the middle of
    parsing.  Read here, a too-long body is marked for a 413 and an unreadable one for a 400 (`guard` answers
    both); a good one becomes an ordinary body with a Content-Length.  Transfer-Encoding wins over any
    Content-Length, as HTTP/1.1 says."""

    def app(environ, start_response):
        if "wsgi.input_terminated" in environ:
            # into a fixed-size view: werkzeug's reader pads a chunk cut short when it may resize the buffer,
            # and fails (ValueError) when it may not
            buf, got, error = bytearray(MAX_BODY + 1), 0, None
            view = memoryview(buf)
            try:
                while got <= MAX_BODY:
                    n = environ["wsgi.input"].readinto(view[got:])
                    if not n:
                        break
                    got += n
            except (OSError, ValueError):  # "Invalid chunk header", a chunk cut short, ...
                error = 400
            view.release()
            if error is None and got > MAX_BODY:
                error = 413
            if error is not None:
                environ["treegram.body_error"] = error
                got = 0
            del environ["wsgi.input_terminated"]
            environ.pop("HTTP_TRANSFER_ENCODING", None)  # werkzeug ignores a Content-Length beside it
            environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(bytes(buf[:got])), str(got)
        return wsgi_app(environ, start_response)

    return app


def _refusal(status: int, text: str):
    """A short page for a refused request: it carries no token, no form and no sheet."""
    from flask import Response

    body = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>treegram serve</title></head>"
            f"<body><p>{html.escape(text)}</p></body></html>\n")
    return Response(body, status=status, mimetype="text/html")


def create_app(bench: Workbench, hosts: frozenset[str] = frozenset()):
    """The Flask app of the page.  `hosts` is the Host allow-list (`allowed_hosts`); `make_server` sets it once
    the port is bound (`app.config["TREEGRAM_HOSTS"]`).  Until then every request is refused."""
    try:
        from flask import Flask, Request, Response, request
        from werkzeug.formparser import FormDataParser
    except ImportError:
        raise InputError("treegram serve needs Flask", hint="pip install flask==3.1.3") from None

    class StrictRequest(Request):
        """A form body that cannot be decoded raises (caught in `guard`: 400), instead of reading as an empty form."""

        def make_form_data_parser(self) -> FormDataParser:
            parser = super().make_form_data_parser()
            parser.silent = False
            return parser

    app = Flask("treegram.serve", static_folder=None)  # no ./static of whatever folder serve was started in
    app.request_class = StrictRequest
    app.wsgi_app = _whole_chunked_body(app.wsgi_app)
    app.config.update(TREEGRAM_HOSTS=frozenset(hosts), MAX_CONTENT_LENGTH=MAX_BODY, MAX_FORM_MEMORY_SIZE=MAX_BODY)
    token = secrets.token_urlsafe(32)  # per server: a page from another site cannot read it, so cannot post

    def page(*args, **kwargs) -> str:
        return _page(bench, *args, token=token, **kwargs)

    def own_origin(value: str, origins: set[str]) -> bool:
        parts = urlsplit(value.strip())
        return f"{parts.scheme}://{parts.netloc}".lower() in origins

    @app.before_request
    def guard():
        hosts = app.config["TREEGRAM_HOSTS"]
        # the raw header: werkzeug would fill a missing one from the socket's own address
        if request.environ.get("HTTP_HOST", "").strip().lower() not in hosts:
            return _refusal(400, "unknown Host: open the page at the address treegram serve printed")
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return None
        origins = {f"http://{h}" for h in hosts}
        origin, referer = request.headers.get("Origin"), request.headers.get("Referer")
        site = request.headers.get("Sec-Fetch-Site", "same-origin").strip().lower()
        # browsers send Origin on every POST (a sandboxed or privacy-stripped one as "null", refused here);
        # clients that send neither header must still show the token
        if (site not in ("same-origin", "none") or (origin is not None and not own_origin(origin, origins))
                or (origin is None and referer is not None and not own_origin(referer, origins))):
            return _refusal(403, "refused: this request came from another web site")
        body_error = request.environ.get("treegram.body_error")
        if body_error == 413:
            return _refusal(413, f"the request is too large (at most {MAX_BODY // 1024} KiB)")
        if body_error:
            return _refusal(400, "the request body could not be read")
        try:
            form = request.form  # parsed here, so a body that cannot be read is a 400 and not a 500 later
        except (OSError, ValueError):  # a malformed chunked body, bytes that are not UTF-8, ...
            return _refusal(400, "the request body could not be read")
        if not hmac.compare_digest(str(form.get("csrf", "")).encode(), token.encode()):
            return _refusal(403, "this page is out of date or came from elsewhere: reload http://"
                            f"{request.environ['HTTP_HOST']}/ and try again")
        return None

    @app.after_request
    def headers(response):
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.get("/")
    def index():
        return page()

    @app.post("/sheet")
    def make():
        try:
            sid, entry = bench.build(request.form)
        except TreegramError as exc:
            msg = str(exc) + (f" ({exc.hint})" if exc.hint else "")
            return page(dict(request.form), error=msg), 400
        return page(entry["settings"], sid)

    @app.post("/sheet/<sid>/replace/<int:number>")
    def replace(sid: str, number: int):
        try:
            entry = bench.get(sid)
        except TreegramError as exc:
            return page(error=str(exc)), 404
        try:
            msg = bench.replace(sid, number)
        except TreegramError as exc:
            return page(entry["settings"], sid, error=str(exc) + (f" ({exc.hint})" if exc.hint else "")), 400
        return page(entry["settings"], sid, message=msg)

    @app.get("/sheet/<sid>/download/<fmt>")
    def download(sid: str, fmt: str):
        try:
            entry = bench.get(sid)
            data = render(entry["sheet"], fmt)
        except TreegramError as exc:
            return page(error=str(exc)), 404
        name = f"treegram-{entry['settings']['kind']}-{entry['number']}{get_format(fmt).extension}"
        return Response(data, mimetype=get_format(fmt).media_type.split(";")[0],
                        headers={"Content-Disposition": f'attachment; filename="{name}"',
                                 "Content-Type": get_format(fmt).media_type})

    return app


def vocab_choices(extra: str | None) -> list[str]:
    return ([extra] if extra else []) + [f"cefr:{lv}" for lv in LEVELS]


def make_server(bench: Workbench, host: str = "127.0.0.1", port: int = 0):
    """A werkzeug server for the page (threaded); `server.port` is the port it got, `server.shutdown()` stops it."""
    from werkzeug.serving import make_server as _make

    host, port = check_host(host), check_port(port)
    app = create_app(bench)
    server = _make(host, port, app, threaded=True)
    app.config["TREEGRAM_HOSTS"] = allowed_hosts(host, server.port)
    return server


def warm_up() -> None:
    """Load the spaCy pipeline, the PCFG behind reorder tiles, lemminflect's tables and the WordNet sense counts
    once (about 5 s cold)."""
    from treegram.plugins.vocabgen.exercises import analyse, parse, wordnet_senses

    try:
        analyse(("we", "went", "home", "."))
        parse(("we", "went", "home", "."))
        lemma_of("went")
        wordnet_senses()
    except Exception:  # noqa: BLE001 - warming up is an optimisation; the request reports any real problem
        pass


def run_server(args, ui) -> int:
    from treegram.plugins.vocabgen.default import load_vocabgen

    check_host(args.host)
    check_port(args.port)
    if args.vocab:
        from treegram.plugins.vocabgen.vocab import parse_vocab_spec

        parse_vocab_spec(args.vocab)  # a bad spec fails here, before the server starts
    model = load_vocabgen(Path(args.model) if args.model else None, ui)
    bench = Workbench(model, vocab_choices(args.vocab), ui, allow_unchecked=args.allow_unchecked)
    try:
        server = make_server(bench, args.host, args.port)
    except OSError as exc:
        raise InputError(f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc})",
                         hint="choose another --port (0 = any free port)") from None
    threading.Thread(target=warm_up, daemon=True).start()  # the parser and lemma tables load while the page opens
    host = f"[{args.host}]" if ":" in args.host else args.host
    ui.note(f"treegram serve: open http://{host}:{server.port}/  (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


__all__ = ["Workbench", "create_app", "make_server", "run_server", "check_host", "check_port", "allowed_hosts",
           "vocab_choices", "LETTERS", "SECURITY_HEADERS", "MAX_BODY"]
