"""The book on the smoke preset: chapters executed by papermill, built by Jupyter Book 1."""

import hashlib
import json
from pathlib import Path

from isobook.book import ROOT, build_book, chapters


def test_the_smoke_book_builds_from_executed_chapters_without_touching_the_sources(outputs_with_sets: Path) -> None:
    sources = {c: hashlib.sha256((ROOT / f"{c}.py").read_bytes()).hexdigest() for c in chapters()}
    index = build_book(str(ROOT / "params" / "smoke.yaml"), [f"system.outputs={outputs_with_sets}"])
    assert index == outputs_with_sets / "book" / "html" / "index.html" and index.is_file()
    for chapter in chapters():
        name = Path(chapter).name
        notebook = json.loads((outputs_with_sets / "book" / "notebooks" / f"{name}.ipynb").read_text())
        injected = [c for c in notebook["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
        assert len(injected) == 1 and "smoke.yaml" in "".join(injected[0]["source"])
        errors = [o for c in notebook["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors
        page = (index.parent / f"{chapter}.html").read_text()
        assert "<img" in page and ".svg" in page  # charts are local SVG files, not CDN-rendered
    images = list((index.parent / "_images").glob("*.svg"))
    assert images and all(p.read_text().startswith("<svg") for p in images)
    assert sources == {c: hashlib.sha256((ROOT / f"{c}.py").read_bytes()).hexdigest() for c in chapters()}
