"""A page's bytes to a preview: the charset, the parse, the rules, walls, embeds, clean URLs, and
the worker processes the Post Processor extracts in (see page.py)."""
from spiderduck.extract.page import extract_cases, extract_page

__all__ = ["extract_cases", "extract_page"]
