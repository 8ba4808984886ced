"""The run store's one error, kept apart so that the CLI can catch it without importing
torch or pandas."""


class StoreError(Exception):
    """A file or folder under ``system.outputs`` is missing or unreadable (a partial copy, a
    disk error, a hand edit); the message names it and what to delete to rebuild it."""
