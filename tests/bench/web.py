"""The web page's speed, in headless Chromium against a live service.

    python tests/bench/web.py [--moves 100] [--cascades 3] [--frames 300]

Starts a redis-server and the service, then measures in the page itself (timestamps of
the input event, and of the frame after the one that painted the change):

- expert: a click to the cells it opened painted, over ``--moves`` clicks on safe cells of
  seeded games. Baseline: the same moves on a twin game (same seed) answered on a bare
  WebSocket: the service's own time, which the page's figure contains. Target: p95 <= 50 ms.
- 1000x1000: the first click, which opens the whole board, to the board painted, and
  the longest main-thread task meanwhile, ``--cascades`` times. Baseline: the same reveal
  on a twin game answered on a bare WebSocket. Target: <= 1 s, no long task over 200 ms.
- panning and zooming a 1000x1000 board (after its cascade): frames per second over
  ``--frames`` frames of scrolling at the default zoom, at the whole-board zoom, and of
  Ctrl + wheel zooming. Baseline: the same page's frame rate doing nothing. Target: 60.

Not a test (nothing here fails a build): the figures follow the machine's load, printed
first. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers import RedisServer, ServiceProcess  # noqa: E402
from tests.web.support import CHROMIUM, LAUNCH_ARGS, Api, mine_layout, token_script  # noqa: E402

DESKTOP = {"viewport": {"width": 1280, "height": 800}}

# In the page: when the player's click came (its event time), and when the board painted
# each version, taken at the start of the next frame (by then the painted one is shown).
PROBE = """
window.__bench = { clicks: [], painted: new Map(), long: [] };
addEventListener('mouseup', (e) => __bench.clicks.push(e.timeStamp), true);
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) __bench.long.push([e.startTime, e.duration]);
}).observe({ type: 'longtask', buffered: true });
addEventListener('DOMContentLoaded', () => {
  const area = document.querySelector('#board-area');
  new MutationObserver(() => {
    const v = Number(area.dataset.painted);
    if (!__bench.painted.has(v)) requestAnimationFrame((t) => __bench.painted.set(v, t));
  }).observe(area, { attributes: true, attributeFilter: ['data-painted'] });
});
"""


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class Twin:
    """A bare WebSocket client playing a twin of the page's game (same seed, same moves):
    the service's own answer time for each move, the baseline the page's figure contains."""

    def __init__(self, base: str, game_id: str, token: str) -> None:
        from websockets.sync.client import connect

        url = base.replace("http", "ws", 1) + f"/games/{game_id}/events"
        self.ws = connect(url, max_size=None, open_timeout=60).__enter__()
        self.ws.recv()  # the snapshot
        self.ws.send(json.dumps({"type": "auth", "token": token}))
        self.next_id = 0

    def reveal(self, x: int, y: int) -> float:
        """Reveal (x, y); ms until the answer (the diff, in a ``result``) is in."""
        self.next_id += 1
        start = time.perf_counter()
        self.ws.send(json.dumps({"type": "reveal", "x": x, "y": y, "id": self.next_id}))
        while True:
            message = self.ws.recv(timeout=120)
            if message.startswith('{"type":"result"'):
                return (time.perf_counter() - start) * 1000

    def close(self) -> None:
        self.ws.close()


def open_page(browser: Any, base: str, game_id: str, token: str) -> Any:
    ctx = browser.new_context(**DESKTOP)
    page = ctx.new_page()
    page.add_init_script(token_script(game_id, token))
    page.add_init_script(PROBE)
    page.goto(f"{base}/#/game/{game_id}")
    page.wait_for_selector("#board [data-i]", state="attached", timeout=60_000)
    page.wait_for_function("document.querySelector('#conn').dataset.state === 'live'",
                           timeout=60_000)
    return ctx, page


def click_cell(page: Any, x: int, y: int) -> tuple[int, float, float, list[list[float]]]:
    """Click cell (x, y); once its version is painted: the version, the click's and the
    paint's times (epoch ms), and the long tasks (page time) so far."""
    version = int(page.evaluate("document.querySelector('#board-area').dataset.painted"))
    point = page.evaluate(
        """([x, y]) => {
          const s = document.querySelector('#board-space').getBoundingClientRect();
          const grid = document.querySelector('#board');
          const c = parseFloat(getComputedStyle(grid).getPropertyValue('--cell'));
          return [s.left + (x + 0.5) * c, s.top + (y + 0.5) * c];
        }""",
        [x, y],
    )
    page.mouse.click(*point)
    page.wait_for_function(f"__bench.painted.has({version + 1})", timeout=120_000, polling=50)
    clicked, painted, long, origin = page.evaluate(
        f"[__bench.clicks.at(-1), __bench.painted.get({version + 1}), __bench.long,"
        " performance.timeOrigin]"
    )
    return version + 1, origin + clicked, origin + painted, [[origin + a, d] for a, d in long]


def listed(values: list[float]) -> str:
    return ", ".join(f"{v:.0f}" for v in values)


def bench_expert(browser: Any, api: Api, base: str, moves: int) -> None:
    page_ms: list[float] = []  # click to painted, in the page
    twin_ms: list[float] = []  # the same move's answer on a twin game, on a bare socket
    seed = 9000
    while len(page_ms) < moves:
        seed += 1
        settings = {"preset": "expert", "seed": seed}
        mines = mine_layout(api, settings, (15, 8))
        game, token = api.create(**settings)
        twin_game, twin_token = api.create(**settings)
        ctx, page = open_page(browser, base, game["id"], token)
        twin = Twin(base, twin_game["id"], twin_token)
        try:
            cell = (15, 8)
            while len(page_ms) < moves:
                _, clicked, painted, _ = click_cell(page, *cell)
                page_ms.append(painted - clicked)
                twin_ms.append(twin.reveal(*cell))
                board = api.get(game["id"])["board"]
                todo = [(x, y) for y, row in enumerate(board) for x, ch in enumerate(row)
                        if ch == "#" and (x, y) not in mines]
                if not todo:
                    break
                cell = todo[len(todo) // 2]
        finally:
            twin.close()
            ctx.close()
    print(f"expert, click to painted cells over {len(page_ms)} clicks: "
          f"p50 {pct(page_ms, 50):.1f} ms, p95 {pct(page_ms, 95):.1f} ms (target p95 <= 50 ms)")
    print(f"  baseline, the same moves answered on a bare socket: "
          f"p50 {pct(twin_ms, 50):.1f} ms, p95 {pct(twin_ms, 95):.1f} ms; page/baseline "
          f"p50 {pct(page_ms, 50) / pct(twin_ms, 50):.1f}, "
          f"p95 {pct(page_ms, 95) / pct(twin_ms, 95):.1f}")


def bench_cascade(browser: Any, api: Api, base: str, cascades: int) -> Any:
    page_ms: list[float] = []
    twin_ms: list[float] = []
    longest: list[float] = []
    kept = None
    for n in range(cascades):
        settings = {"width": 1000, "height": 1000, "mines": 1000, "seed": 7000 + n}
        game, token = api.create(**settings)
        twin_game, twin_token = api.create(**settings)
        twin = Twin(base, twin_game["id"], twin_token)
        try:
            twin_ms.append(twin.reveal(500, 500))
        finally:
            twin.close()
        ctx, page = open_page(browser, base, game["id"], token)
        _, clicked, painted, long = click_cell(page, 500, 500)
        page_ms.append(painted - clicked)
        longest.append(max((d for start, d in long if clicked <= start <= painted), default=0.0))
        if kept is None:
            kept = ctx, page
        else:
            ctx.close()
    print(f"1000x1000, first click (a whole-board cascade) to painted, {cascades} runs: "
          f"{listed(page_ms)} ms (target <= 1000 ms)")
    print(f"  longest main-thread task meanwhile: {listed(longest)} ms (target <= 200 ms)")
    print(f"  baseline, the same reveal on a twin game answered on a bare socket: "
          f"{listed(twin_ms)} ms; page/baseline "
          f"{', '.join(f'{a / b:.2f}' for a, b in zip(page_ms, twin_ms, strict=True))}")
    return kept


# Frames driven in the page: each one scrolls (or zooms) the board a step; the frame rate
# is what requestAnimationFrame delivered meanwhile.
DRIVE = """
async ([kind, frames]) => {
  const sc = document.querySelector('#scroller');
  const stamps = [];
  let dir = 1;
  await new Promise((done) => {
    const step = (t) => {
      stamps.push(t);
      const k = stamps.length;
      if (kind === 'pan') {
        const end = sc.scrollLeft + sc.clientWidth >= sc.scrollWidth - 20;
        if (end || (dir < 0 && sc.scrollLeft <= 20)) dir = -dir;
        sc.scrollLeft += 9 * dir;
        sc.scrollTop += 5 * dir;
      } else if (kind === 'zoom') {
        const r = sc.getBoundingClientRect();
        if (k % 60 === 0) dir = -dir;
        const at = { clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
        sc.dispatchEvent(new WheelEvent('wheel', { deltaY: 12 * dir, ctrlKey: true, ...at }));
      }
      if (k < frames) requestAnimationFrame(step); else done();
    };
    requestAnimationFrame(step);
  });
  const gaps = stamps.slice(1).map((t, i) => t - stamps[i]);
  return { fps: (gaps.length * 1000) / (stamps.at(-1) - stamps[0]), gaps };
}
"""


def bench_frames(page: Any, frames: int) -> None:
    def run(kind: str) -> tuple[float, float]:
        result = page.evaluate(DRIVE, [kind, frames])
        return result["fps"], pct(result["gaps"], 95)

    idle = run("idle")
    rows = [("doing nothing (baseline)", idle)]
    rows.append(("panning at the default zoom", run("pan")))
    page.get_by_role("button", name="Whole board").click()
    page.get_by_role("button", name="Zoom in").click()  # a little closer than all of it
    rows.append(("panning at a few pixels a cell", run("pan")))
    rows.append(("Ctrl + wheel zooming", run("zoom")))
    print(f"1000x1000, frames per second over {frames} frames (target 60):")
    for what, (fps, gap) in rows:
        print(f"  {what}: {fps:.1f} fps, p95 frame {gap:.1f} ms, "
              f"{fps / idle[0]:.2f} of the baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--cascades", type=int, default=3)
    parser.add_argument("--frames", type=int, default=300)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}, {os.cpu_count()} cores")
    redis = RedisServer().start()
    service = ServiceProcess({"REDIS_URL": redis.url}).start()
    api = Api(service.url)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            try:
                bench_expert(browser, api, service.url, args.moves)
                ctx, page = bench_cascade(browser, api, service.url, args.cascades)
                bench_frames(page, args.frames)
                ctx.close()
            finally:
                browser.close()
    finally:
        api.close()
        service.stop()
        redis.cleanup()
    print(f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
