"""The Jupyter Book: what a chapter's kernel imports, executing the chapters, the findings
pages and the charts."""
