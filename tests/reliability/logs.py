"""Reading a service's JSON log for errors: a failure the client never saw is still one."""

from __future__ import annotations

import json

# Logged by uvicorn itself (with a traceback) when it closes a socket with 1007 for a
# text frame that is not UTF-8: the protocol working as it should, not a failure.
EXPECTED = {("uvicorn.error", "Invalid UTF-8 sequence received from client.")}


def server_errors(log: str) -> list[str]:
    """Error-level lines (and anything with a traceback) that are not expected ones."""
    found = []
    for line in log.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            if "Traceback" in line or "Error" in line:
                found.append(line)
            continue
        if not isinstance(record, dict):
            continue
        key = (record.get("logger"), record.get("message"))
        serious = record.get("level") in ("error", "critical") or "Traceback" in line
        if serious and key not in EXPECTED:
            found.append(line)
    return found
