"""The browser table (``pokerbot web``): :mod:`.view` computes what the page shows from
ACPC states, :mod:`.table` seats a person at our dealer, :mod:`.watch` follows a match
from its files and :mod:`.server` (aiohttp, the ``web`` extra) serves the page."""
