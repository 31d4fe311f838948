"""The Minesweeper game service: the rules (``engine``), the shapes on the wire (``wire``),
Redis (``store``) and the HTTP and WebSocket API (``api``)."""
