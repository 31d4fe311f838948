"""``python -m service``: run the service, starting an embedded Redis when REDIS_URL is unset."""

from __future__ import annotations

import logging
import logging.config
import os
import sys
import tempfile

import uvicorn

from . import logs
from .config import Config, usage
from .store.embedded import EmbeddedRedis


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args:
        print(usage())
        raise SystemExit(0 if args[0] in ("-h", "--help") else 2)
    config = Config.from_env()
    log_config = logs.config(config.log_level)
    logging.config.dictConfig(log_config)
    if config.workers > 1 and "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        # Each worker counts on its own; /metrics adds them up from this folder.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="ms-metrics-")
    embedded = None
    if not config.redis_url:
        embedded = EmbeddedRedis(config.data_dir).start()
        # Worker processes read their settings from the environment.
        os.environ["REDIS_URL"] = embedded.url
    try:
        uvicorn.run(
            "service.api.app:create_app",
            factory=True,
            host=config.host,
            port=config.port,
            workers=config.workers,
            log_level=config.log_level,
            log_config=log_config,
            access_log=False,
            proxy_headers=True,
            ws_max_size=64 * 1024,
            # Diffs are small and sent to many sockets at once: compressing each copy
            # costs more CPU than it saves bandwidth.
            ws_per_message_deflate=False,
            timeout_graceful_shutdown=5,
        )
    finally:
        if embedded is not None:
            embedded.stop()


if __name__ == "__main__":
    main()
