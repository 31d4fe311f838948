"""``python -m service``: run the service, starting an embedded Redis when REDIS_URL is unset."""

from __future__ import annotations

import logging
import os
import sys

import uvicorn

from .config import Config, usage
from .store.embedded import EmbeddedRedis


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args:
        print(usage())
        raise SystemExit(0 if args[0] in ("-h", "--help") else 2)
    config = Config.from_env()
    logging.basicConfig(
        level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
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
            access_log=config.log_level == "debug",
            proxy_headers=True,
            ws_max_size=64 * 1024,
            timeout_graceful_shutdown=5,
        )
    finally:
        if embedded is not None:
            embedded.stop()


if __name__ == "__main__":
    main()
