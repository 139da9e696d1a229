"""Documents to pages to chunks: loading, structure, cleaning, chunking, the ingest report.

Modules, in pipeline order:

* ``records``      Document, Page, Chunk, Corpus, DocumentSpec; page_key / chunk_key ids
* ``chunk_columns`` a corpus's chunk ids, documents and pages as arrays by corpus row
* ``formats``      the PDF, text and Markdown page formats; Loaded, the progress hook
* ``collection``   collections in one JSONL file (BEIR's corpus.jsonl): a page per document
* ``loaders``      the loader registry by format, JSONL pages, load / count / label a document
* ``pdf_text``     page texts of a long PDF read by helper processes
* ``page_cache``   on-disk cache of loaded page texts (no re-extraction on a repeated run)
* ``outline``      PDF outline and markup -> heading paths, page labels
* ``title_match``  where a heading title occurs in a page (str.find on ASCII pages)
* ``headings``     heading detection in plain text
* ``boilerplate``  repeated-line and web-noise filter
* ``glyphs``       glyph-index token patterns
* ``chunking``     chunkers (heading, page, size-with-overlap)
* ``page_checks``  page warnings of the ingestion report (registry of checks, thresholds)
* ``ingest``       the ingestion report of `rulegauge ingest`
"""

__all__ = ["boilerplate", "chunk_columns", "chunking", "collection",
           "formats", "glyphs", "headings", "ingest", "loaders",
           "outline", "page_cache", "page_checks", "pdf_text", "records", "title_match"]
