"""Names for guests: a player registered without a name gets a friendly one, such as
``CalmOtter-4821``, that fits the rules of names (2 to 20 of ``A-Z a-z 0-9 _ -``)
and can be changed later."""

from __future__ import annotations

import secrets

_ADJECTIVES = (
    "Amber", "Bold", "Brave", "Bright", "Calm", "Clever", "Cosmic", "Swift", "Gentle",
    "Happy", "Jolly", "Keen", "Lucky", "Merry", "Nimble", "Quiet", "Rapid", "Sunny",
    "Steady", "Witty",
)
_ANIMALS = (
    "Badger", "Beaver", "Crane", "Falcon", "Ferret", "Gecko", "Heron", "Koala", "Lemur",
    "Lynx", "Marten", "Otter", "Panda", "Puffin", "Raven", "Robin", "Seal", "Tapir",
    "Walrus", "Wombat",
)


def guest_name() -> str:
    """A made-up name: with 10,000 numbers for each of 400 pairs, two guests seldom meet."""
    return f"{secrets.choice(_ADJECTIVES)}{secrets.choice(_ANIMALS)}-{secrets.randbelow(10_000)}"
