"""Writes the SDK's synchronous client from its asynchronous one.

``clients/python/minesweeper/aio.py`` is the only hand-written client; ``client.py``
is that file without ``async``, ``await`` and the live section (everything after the
``# ---- live`` line), and without the imports marked ``# async only``. After a
change to ``aio.py`` run ``python -m tests.clients.sync_client`` to rewrite
``client.py``; ``tests/clients/test_shared.py`` fails while it is not current.
"""

from __future__ import annotations

import ast
from pathlib import Path

SDK = Path(__file__).resolve().parents[2] / "clients" / "python" / "minesweeper"
ASYNC = SDK / "aio.py"
SYNC = SDK / "client.py"

DOCSTRING = '''"""The synchronous client: one method per endpoint, answers decoded into Structs.

Written from ``aio.py`` by ``python -m tests.clients.sync_client``: edit that file,
not this one.
"""
'''
ASYNC_ONLY = "  # async only"
LIVE_SECTION = "    # ---- live"
# Applied in this order, each to the whole text.
WORDS = (
    ("AsyncClient", "Client"),
    ("async def ", "def "),
    ("async with ", "with "),
    ("async for ", "for "),
    ("await ", ""),
    ("__aenter__", "__enter__"),
    ("__aexit__", "__exit__"),
    ("aclose", "close"),
)


def synchronous(source: str) -> str:
    """The text of ``client.py`` for the text of ``aio.py``."""
    lines = source.splitlines(keepends=True)
    docstring_end = ast.parse(source).body[0].end_lineno
    assert docstring_end is not None
    kept: list[str] = []
    for line in lines[docstring_end:]:
        if line.startswith(LIVE_SECTION):
            break
        if line.rstrip("\n").endswith(ASYNC_ONLY):
            continue
        kept.append(line)
    text = DOCSTRING + "".join(kept).rstrip("\n") + "\n"
    for old, new in WORDS:
        text = text.replace(old, new)
    return text


def main() -> None:
    SYNC.write_text(synchronous(ASYNC.read_text()))
    print(f"{SYNC.name} written from {ASYNC.name}")


if __name__ == "__main__":
    main()
