"""Post Processor extraction: charset, HTML5 parse, page metadata (see page.py)."""
from spiderduck.extract.page import extract_cases, extract_page

__all__ = ["extract_cases", "extract_page"]
