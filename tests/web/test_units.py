"""The web client's unit tests (``tests/web/unit``), run by node's own test runner."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = Path(__file__).resolve().parent / "unit"


def test_the_web_clients_unit_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("the web client's unit tests need node (apt-get install nodejs)")
    files = sorted(str(p.relative_to(ROOT)) for p in UNIT.glob("*.test.js"))
    assert files, f"no unit tests found in {UNIT}"
    # The files are named one by one: node 18 and 20 take directories, newer ones globs.
    run = subprocess.run(
        [node, "--test", *files], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, f"node --test failed:\n{run.stdout}\n{run.stderr}"
