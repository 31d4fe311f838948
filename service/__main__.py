"""``python -m service``: run the service, starting an embedded Redis when REDIS_URL is unset,
and stop everything it started however it is asked to stop (Ctrl-C or SIGTERM)."""

from __future__ import annotations

import logging
import logging.config
import os
import shutil
import signal
import socket
import sys
import tempfile
from types import FrameType

import uvicorn

from . import config, logs
from .store.embedded import DataDirError, EmbeddedRedis


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    sys.exit(0)


def main(argv: list[str] | None = None) -> None:
    parser = config.parser()
    flags = config.flags_given(parser.parse_args(argv))
    try:
        settings = config.read(os.environ, flags)
    except config.SettingError as exc:
        parser.error(str(exc))
    try:
        # uvicorn would find out only once the app has started, and end with a traceback.
        socket.getaddrinfo(settings.host, settings.port, type=socket.SOCK_STREAM,
                           flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        parser.error(f"HOST {settings.host!r} is not an address to listen on: {exc}")
    # Worker processes build the app from the environment: the flags must reach them there.
    os.environ.update(flags)
    log_config = logs.config(settings.log_level)
    logging.config.dictConfig(log_config)
    meant = config.misspelled(os.environ)
    if meant:
        logging.getLogger("service.config").warning(
            "ignored, not settings: %s", ", ".join(
                f"{name} (did you mean {setting}?)" for name, setting in sorted(meant.items())
            )
        )
    metrics_dir = None
    if settings.workers > 1 and "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        # Each worker counts on its own; /metrics adds them up from this folder.
        metrics_dir = tempfile.mkdtemp(prefix="ms-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    # uvicorn stops gracefully on SIGTERM, then raises it again with the handler it found;
    # the default one would end the process before ``finally`` stops the embedded Redis.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    embedded = None if settings.redis_url else EmbeddedRedis(
        settings.data_dir, settings.appendfsync
    )
    try:
        if embedded is not None:
            try:
                os.environ["REDIS_URL"] = embedded.start().url
            except DataDirError as exc:
                parser.error(str(exc))
        uvicorn.run(
            "service.api.app:create_app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            # The levels are log_config's alone: uvicorn's log_level would set its
            # loggers' again, the frame logger's (auth tokens at debug) among them.
            log_config=log_config,
            access_log=False,
            # The app's own edge believes forwarding headers from FORWARDED_ALLOW_IPS.
            proxy_headers=False,
            ws_max_size=64 * 1024,
            # Diffs are small and sent to many sockets at once: compressing each copy
            # costs more CPU than it saves bandwidth.
            ws_per_message_deflate=False,
            timeout_graceful_shutdown=5,
        )
    except KeyboardInterrupt:
        pass  # Ctrl-C, raised again by uvicorn once it has shut down: a clean stop
    finally:
        if embedded is not None:
            embedded.stop()
        if metrics_dir is not None:
            shutil.rmtree(metrics_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
