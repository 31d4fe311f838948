"""The README's curl walkthrough runs as written against a live service.

Every ``sh`` block of the "Scripting with curl" section runs, in order, in one bash
process (later blocks use the variables earlier ones set), with ``BASE`` pointing at the
test's service. Each block must succeed and print what the ``text`` block after it shows,
where ``...`` stands for anything (ids, times).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.servers import ROOT

SECTION = "## Scripting with curl"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def section(text: str) -> str:
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else len(text)]


def blocks(text: str) -> list[tuple[str, str | None]]:
    """Each ``sh`` block with the ``text`` block that follows it, if one does."""
    out: list[tuple[str, str | None]] = []
    for m in FENCE.finditer(section(text)):
        language, body = m.group(1), m.group(2)
        if language == "sh":
            out.append((body, None))
        elif language == "text" and out and out[-1][1] is None:
            out[-1] = (out[-1][0], body)
    return out


def matches(expected: str, actual: str) -> bool:
    """``actual`` equals ``expected`` where each ``...`` in it stands for any text."""
    pattern = ".*".join(re.escape(piece) for piece in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def test_readme_section_has_the_walkthrough() -> None:
    found = blocks((ROOT / "README.md").read_text())
    assert len(found) >= 5
    script = "\n".join(body for body, _ in found)
    for step in ("/games\"", "Accept: text/plain", "/reveal", "/flag", "/chord", "/players"):
        assert step in script, step
    assert all(expected is not None for _, expected in found)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_readme_curl_walkthrough_runs_as_written(live_server: str, tmp_path: Path) -> None:
    found = blocks((ROOT / "README.md").read_text())
    parts = ["set -euo pipefail"]
    for i, (body, _) in enumerate(found):
        parts += [f"printf '@@block {i}\\n'", body, f"printf '\\n@@ok {i}\\n'"]
    run = subprocess.run(
        ["bash", "-c", "\n".join(parts)], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, env={**os.environ, "BASE": live_server},
    )
    outputs = re.split(r"^@@block \d+\n", run.stdout, flags=re.MULTILINE)[1:]
    for i, (body, expected) in enumerate(found):
        assert i < len(outputs), f"block {i} never ran:\n{body}\nstderr: {run.stderr}"
        out, ok, _ = outputs[i].partition(f"\n@@ok {i}\n")
        assert ok, f"block {i} failed:\n{body}\noutput: {out}\nstderr: {run.stderr}"
        assert expected is not None
        got = out.rstrip("\n").splitlines()
        want = expected.rstrip("\n").splitlines()
        assert len(got) == len(want), (i, got, want)
        for g, w in zip(got, want, strict=True):
            assert matches(w, g), f"block {i}: {g!r} does not match {w!r}"
    assert run.returncode == 0, run.stderr
