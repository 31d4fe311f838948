class StoreError(Exception):
    pass


class StoreUnavailable(StoreError):
    """Redis cannot be reached or did not answer in time."""


class GameNotFound(StoreError):
    """No such game, or it expired."""
