"""``python -m harness.store > docs/schemas.md``: every registered table as Markdown."""

from harness.store.tables import markdown

print(markdown())
