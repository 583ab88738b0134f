"""Open an HTML file in headless Chromium and report how its images rendered.

No DevTools protocol: a probe script is appended to a copy of the page, it records what
the browser did into a `<pre id="rmeval-probe">` element, and `chromium --dump-dom` prints
the DOM once the page (and the probe's timers, under a virtual-time budget) has finished.

For a `snakemake --report` page the probe drives the report's own React app: for every
image result it calls `app.setView({content: "img", ...})`, exactly what clicking the
result's eye icon does, then waits for the `<img>` the app mounts and records its natural
size (0 when the browser could not decode it) and its on-page size.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)
PROBE_ID = "rmeval-probe"

# Runs after the report's own scripts (it is inserted just before </body>).
REPORT_PROBE = """
<script>
(async function () {
  const out = {done: false, step: "start", app_mounted: false, nav_text: "", categories: {}, images: [], errors: []};
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // The record is kept up to date, so that a probe that stalls still tells how far it got.
  const pre = document.createElement("pre");
  pre.id = "%(probe_id)s";
  document.body.appendChild(pre);
  const save = (step) => { out.step = step; pre.textContent = JSON.stringify(out); };
  const finish = () => { out.done = true; save("done"); };
  save("waiting for the app");
  window.addEventListener("error", (event) => out.errors.push(String(event.message)));
  try {
    for (let i = 0; i < 200 && !(typeof app !== "undefined" && document.querySelector("#app").children.length); i++) {
      await sleep(25);
    }
    out.app_mounted = typeof app !== "undefined" && document.querySelector("#app").children.length > 0;
    out.categories = categories;
    save("categories");
    for (const category of Object.keys(categories)) {
      app.showCategory(category);
      await sleep(100);
      out.nav_text += " " + document.querySelector("#app").innerText;
    }
    for (const [path, entry] of Object.entries(results)) {
      if (!String(entry.mime_type).startsWith("image/")) continue;
      const record = {path: path, mime_type: entry.mime_type, caption: entry.caption || "",
                      natural_width: 0, natural_height: 0, shown_width: 0, shown_height: 0, error: null};
      try {
        save("viewing " + path);
        app.setView({content: "img", contentPath: entry.data_uri, resultPath: path});
        let img = null;
        for (let i = 0; i < 200 && !img; i++) {
          await sleep(25);
          img = Array.from(document.querySelectorAll("#app img")).find((el) => el.src === entry.data_uri) || null;
        }
        if (!img) throw new Error("the report app mounted no <img> for this result");
        save("loading " + path);
        // Poll rather than await img.decode(): decode() can stay pending under --virtual-time-budget.
        for (let i = 0; i < 400 && !img.complete; i++) await sleep(25);
        if (!img.complete) throw new Error("the image did not finish loading");
        const box = img.getBoundingClientRect();
        record.natural_width = img.naturalWidth;
        record.natural_height = img.naturalHeight;
        record.shown_width = box.width;
        record.shown_height = box.height;
      } catch (error) {
        record.error = String(error);
      }
      out.images.push(record);
    }
  } catch (error) {
    out.errors.push(String(error));
  }
  finish();
})();
</script>
"""

# For a plain HTML page: wait for every <img> in the document.
PAGE_PROBE = """
<script>
window.addEventListener("load", async function () {
  const out = {images: [], errors: []};
  for (const img of Array.from(document.images)) {
    const record = {src: img.currentSrc || img.src, natural_width: 0, natural_height: 0, error: null};
    try {
      for (let i = 0; i < 400 && !img.complete; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      if (!img.complete) throw new Error("the image did not finish loading");
      record.natural_width = img.naturalWidth;
      record.natural_height = img.naturalHeight;
    } catch (error) {
      record.error = String(error);
    }
    out.images.push(record);
  }
  const pre = document.createElement("pre");
  pre.id = "%(probe_id)s";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


@dataclass(frozen=True)
class RenderedImage:
    path: str  # the result's path in the report (or the image's src on a plain page)
    natural_width: int  # 0 when Chromium could not decode the image
    natural_height: int
    shown_width: float  # on-page size of the <img> the report app mounted
    shown_height: float
    caption: str  # the result's caption as HTML (empty on a plain page)
    error: str | None


@dataclass(frozen=True)
class ReportRender:
    app_mounted: bool  # the report's React app rendered into #app
    nav_text: str  # visible text of the app after opening each category
    categories: dict[str, dict[str, list[str]]]  # category -> subcategory -> result paths
    images: list[RenderedImage]
    errors: list[str]  # JavaScript errors seen while rendering


def chromium_path() -> Path | None:
    """Debian's Chromium, or None (tests skip with the reason)."""
    return CHROMIUM if CHROMIUM.is_file() else None


def dump_dom(html: Path, timeout_s: float = 120.0, virtual_time_ms: int = 60000) -> str:
    """The DOM of `html` after load, as Chromium serialises it, using a throw-away profile."""
    with tempfile.TemporaryDirectory(prefix="rmeval-chromium-") as profile:
        command = [
            str(CHROMIUM),
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={virtual_time_ms}",
            "--dump-dom",
            html.resolve().as_uri(),
        ]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    if completed.returncode != 0 or not completed.stdout.strip():
        raise RuntimeError(
            f"chromium failed on {html} (exit {completed.returncode}): {completed.stderr[-2000:]}"
        )
    return completed.stdout


def _with_probe(html: Path, probe: str, workdir: Path) -> Path:
    """A copy of the page with the probe inserted before the last </body> (appended if there is none)."""
    text = html.read_text(encoding="utf-8")
    probe = probe % {"probe_id": PROBE_ID}
    index = text.lower().rfind("</body>")
    text = text + probe if index < 0 else text[:index] + probe + text[index:]
    workdir.mkdir(parents=True, exist_ok=True)
    probed = workdir / f"probed-{html.name}"
    probed.write_text(text, encoding="utf-8")
    return probed


def _probe_result(dom: str, html: Path) -> dict:
    match = re.search(rf'<pre id="{PROBE_ID}">(.*?)</pre>', dom, re.S)
    if match is None:
        raise RuntimeError(f"the probe did not finish on {html}; DOM tail: {dom[-1000:]}")
    import html as html_lib

    return json.loads(html_lib.unescape(match.group(1)))


def render_report(report_html: Path, workdir: Path) -> ReportRender:
    """Open a `snakemake --report` HTML file and view every image result through the report's own app."""
    probed = _with_probe(report_html, REPORT_PROBE, workdir)
    data = _probe_result(dump_dom(probed), report_html)
    if not data.get("done"):
        raise RuntimeError(f"the probe stalled on {report_html} at step {data.get('step')!r}: {data}")
    images = [
        RenderedImage(
            path=item["path"],
            natural_width=int(item["natural_width"]),
            natural_height=int(item["natural_height"]),
            shown_width=float(item["shown_width"]),
            shown_height=float(item["shown_height"]),
            caption=item["caption"],
            error=item["error"],
        )
        for item in data["images"]
    ]
    return ReportRender(
        app_mounted=bool(data["app_mounted"]),
        nav_text=data["nav_text"],
        categories=data["categories"],
        images=images,
        errors=list(data["errors"]),
    )


def render_page_images(page: Path, workdir: Path) -> list[RenderedImage]:
    """Open a plain HTML page and record the natural size of every <img> in it."""
    probed = _with_probe(page, PAGE_PROBE, workdir)
    # Relative image paths must resolve as they do for the original page.
    for sibling in page.parent.iterdir():
        target = workdir / sibling.name
        if sibling.is_file() and sibling != page and not target.exists():
            shutil.copy2(sibling, target)
    data = _probe_result(dump_dom(probed), page)
    return [
        RenderedImage(
            path=item["src"],
            natural_width=int(item["natural_width"]),
            natural_height=int(item["natural_height"]),
            shown_width=0.0,
            shown_height=0.0,
            caption="",
            error=item["error"],
        )
        for item in data["images"]
    ]
