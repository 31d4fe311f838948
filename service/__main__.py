"""``python -m service``: run the service, starting an embedded Redis when REDIS_URL is unset."""

from __future__ import annotations

import logging
import logging.config
import os
import tempfile

import uvicorn

from . import config, logs
from .store.embedded import EmbeddedRedis


def main(argv: list[str] | None = None) -> None:
    parser = config.parser()
    flags = config.flags_given(parser.parse_args(argv))
    try:
        settings = config.read(os.environ, flags)
    except config.SettingError as exc:
        parser.error(str(exc))
    # Worker processes build the app from the environment: the flags must reach them there.
    os.environ.update(flags)
    log_config = logs.config(settings.log_level)
    logging.config.dictConfig(log_config)
    if settings.workers > 1 and "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        # Each worker counts on its own; /metrics adds them up from this folder.
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="ms-metrics-")
    embedded = None
    if not settings.redis_url:
        embedded = EmbeddedRedis(settings.data_dir).start()
        os.environ["REDIS_URL"] = embedded.url
    try:
        uvicorn.run(
            "service.api.app:create_app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            log_level=settings.log_level,
            log_config=log_config,
            access_log=False,
            proxy_headers=True,
            forwarded_allow_ips=settings.trusted_proxies,
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
