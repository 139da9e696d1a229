"""``python -m rulegauge.store > docs/schemas.md``: every registered table as Markdown."""

from rulegauge.store.tables import markdown

print(markdown())
