"""The built book, opened in headless Chromium at 1280 px as a reader opens it.

It fails if an image does not load, a figure's smallest label shows under 9 px
tall, a listing or table scrolls sideways, or a link inside the book points at a
page or anchor that is not there. Chromium and its driver are Debian's
(``chromium``, ``chromium-driver``); ``make test`` installs them where it can, and
without them this test is skipped, saying so.

``python tests/repository/test_book_in_browser.py [FOLDER]`` prints what it finds on every
page and saves a screenshot of each into FOLDER (default scratch/book-screens).
"""
import functools
import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 1280, 900
SMALLEST_LABEL_PX = 9
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"

# What the page says about itself once it has loaded: every figure with its natural
# and shown width, every block that scrolls sideways, every link and every id.
MEASURE = """
const main = document.querySelector('main');
const wide = e => e.scrollWidth > e.clientWidth + 1;
return {
  // mdBook shows each figure twice: on the page, and hidden until clicked to enlarge it.
  images: [...main.querySelectorAll('img:not(.img-wrapper > img)')].map(i => ({
      src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0,
      natural: i.naturalWidth, shown: i.getBoundingClientRect().width})),
  scrolling: [...main.querySelectorAll('pre > code, .table-wrapper')].filter(wide).map(e => ({
      tag: e.tagName === 'CODE' ? 'listing' : 'table', by: e.scrollWidth - e.clientWidth,
      text: e.innerText.split('\\n').find(l => l.trim()).slice(0, 60)})),
  links: [...main.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
  ids: [...document.querySelectorAll('[id]')].map(e => e.id),
};
"""


def chromium_missing() -> str | None:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists():
            return f"{path} is missing (Debian: apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


def mdbook() -> str:
    here = Path(sys.executable).parent / "mdbook"
    return str(here) if here.exists() else shutil.which("mdbook")


def build_book(dest: Path) -> Path:
    subprocess.run([mdbook(), "build", "--dest-dir", str(dest)], cwd=ROOT, check=True,
                   capture_output=True)
    return dest


def serve(folder: Path) -> str:
    """A web server for ``folder`` on a free port, for as long as the process lives."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # A closed network: without these, Chromium keeps reaching for Google's services.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                 f"--window-size={WIDTH},{HEIGHT}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(WIDTH, HEIGHT)
    return driver


def page_names() -> list[str]:
    """Every page a reader reaches from the table of contents."""
    summary = (ROOT / "lessons" / "SUMMARY.md").read_text()
    return [md[:-3] + ".html" for md in re.findall(r"\]\(([^)]+\.md)\)", summary)]


def chapters() -> list[str]:
    """The introduction and the numbered chapters; the appendix and references are not."""
    summary = (ROOT / "lessons" / "SUMMARY.md").read_text()
    numbered = re.findall(r"^- \[[^\]]*\]\(([^)]+\.md)\)", summary, re.M)
    return [md[:-3] + ".html" for md in ["introduction.md", *numbered]]


def smallest_label_px(book: Path, src: str) -> float | None:
    """The smallest text drawn on a figure, in pixels of its PNG: the sidecar says."""
    sidecar = (book / src).with_suffix(".json")
    if not sidecar.is_file():
        return None
    return json.loads(sidecar.read_text()).get("smallest_text_px")


def survey(book: Path, screenshots: Path | None = None) -> dict:
    """Each page's figures, sideways-scrolling blocks and links, as Chromium shows them."""
    url = serve(book)
    driver = browser()
    pages = {}
    try:
        for page in page_names():
            driver.get(url + page)
            driver.execute_script("return document.fonts.ready")
            pages[page] = driver.execute_script(MEASURE)
            if screenshots:
                screenshots.mkdir(parents=True, exist_ok=True)
                height = driver.execute_script("return document.body.scrollHeight")
                driver.set_window_size(WIDTH, min(height, 16000))
                driver.save_screenshot(str(screenshots / page.replace(".html", ".png")))
                driver.set_window_size(WIDTH, HEIGHT)
    finally:
        driver.quit()
    return pages


def problems(book: Path, pages: dict) -> list[str]:
    found = []
    for page, seen in pages.items():
        for image in seen["images"]:
            if not image["loaded"]:
                found.append(f"{page}: {image['src']} does not load")
                continue
            label = smallest_label_px(book, image["src"])
            if label is None:
                found.append(f"{page}: {image['src']} has no sidecar giving its smallest text")
            elif label * image["shown"] / image["natural"] < SMALLEST_LABEL_PX:
                shown = label * image["shown"] / image["natural"]
                found.append(f"{page}: {image['src']}'s smallest label shows {shown:.1f} px tall "
                             f"(shrunk to {image['shown'] / image['natural']:.0%})")
        for block in seen["scrolling"]:
            found.append(f"{page}: a {block['tag']} scrolls sideways by {block['by']} px: "
                         f"{block['text']!r}")
        found += broken_links(page, seen["links"], pages, book)
    return found


def broken_links(page: str, links: list[str], pages: dict, book: Path) -> list[str]:
    found = []
    for href in links:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue                                        # outside the book
        target = unquote(parts.path) or page
        if not (book / target).is_file():
            found.append(f"{page}: link {href!r} points at no page")
        elif parts.fragment and target in pages and parts.fragment not in pages[target]["ids"]:
            found.append(f"{page}: link {href!r} points at no anchor on {target}")
    return found


@pytest.fixture(scope="module")
def book_pages(tmp_path_factory):
    missing = chromium_missing() or (None if mdbook() else "mdbook is not installed")
    if missing:
        pytest.skip(missing)
    book = build_book(tmp_path_factory.mktemp("book"))
    return book, survey(book)


def test_every_page_was_measured(book_pages):
    _, seen = book_pages
    assert set(seen) == set(page_names()) and set(chapters()) < set(seen)
    assert sum(len(page["images"]) for page in seen.values()) > 0, "the book shows no figure"


def test_every_chapter_shows_a_figure(book_pages):
    _, seen = book_pages
    bare = [page for page in chapters() if not seen[page]["images"]]
    assert not bare, f"chapters without a figure: {bare}"


def test_figures_load_and_read_and_nothing_scrolls_sideways(book_pages):
    book, pages = book_pages
    found = problems(book, pages)
    assert not found, "\n".join(found)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "scratch" / "book-screens"
    book = build_book(out / "book")
    pages = survey(book, screenshots=out)
    for page, seen in pages.items():
        for image in seen["images"]:
            shown = image["shown"] / max(image["natural"], 1)
            label = (smallest_label_px(book, image["src"]) or 0) * shown
            print(f"{page}: {image['src']} shown at {shown:.0%}, its smallest label {label:.1f} px")
    print("\n".join(problems(book, pages)) or "no problems")
