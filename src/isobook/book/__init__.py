"""The Jupyter Book: what a chapter's kernel imports (`kernel`), executing the chapters and
building the book (`build`), the findings pages (`pages`) and the charts (`charts`)."""

import sys

# jsonschema (which altair and nbformat import) builds a parser of RFC 3987's grammar at
# import when rfc3987_syntax is installed (jupyter-events asks for it): 2.8 s in every
# process, each chapter's kernel included, for an "iri" format check that none of the
# schemas isobook validates uses. Marked absent, the module is skipped: jsonschema imports
# it under suppress(ImportError) and leaves that one format unchecked. Here, in the
# package, every process that imports a module of the book gets it before altair does.
sys.modules.setdefault("rfc3987_syntax", None)
