"""An article's main text, in words (Document.main_words): its articleBody, else its <article>,
else its <main>, else its <body>, without the elements that are no reading (scripts, styles,
navigation, asides, controls). Counted only for an article (cards.reading_from), after the
parse, from the parser's own tree: one more walk of the main element, in C for lexbor."""
from __future__ import annotations

MAIN_TEXT_ELEMENTS = ("[itemprop~=articleBody i]", "article", "main", "body")
MAIN_TEXT_SKIPPED = frozenset({"script", "style", "noscript", "template", "nav", "aside", "svg", "math",
                               "button", "select", "textarea", "iframe", "object"})
MAIN_TEXT_CHARS = 1_000_000   # of the main text counted


def words(text: str) -> int:
    """The words of a text, in its first MAIN_TEXT_CHARS, as `wc -w` counts them: the runs of
    characters between white space (a dash standing alone is one; a regular expression for
    letters costs seven times as much, and the main text is counted on every article)."""
    return len(text[:MAIN_TEXT_CHARS].split())


_SKIPPED = ", ".join(sorted(MAIN_TEXT_SKIPPED))
_MAX_SKIPPED = 4096     # skipped elements whose text is cut out
_MAX_DEPTH_UP = 64      # ancestors looked at to tell a skipped element inside another (lexbor's
                        # `:not(:is(...) x)` misses some, so it is told here)


def lexbor_words(tree, has_items: bool) -> int:
    """Document.main_words from a lexbor tree: the words of the main element's text without the
    skipped elements' (each once: one inside another, within _MAX_DEPTH_UP levels, goes with the outer
    one). Their texts are cut out of the main text where they stand, in document order (str.find
    from where the last one ended, of the text between the separators first: a button's "Play" is
    not the start of "Player"), so that the words are looked for in the rest only: a page's scripts are
    often most of its text. A skipped element without text is passed over before its ancestors are
    walked (nothing inside it has text either). A cut that starts where the last one ended, or ends
    where the text does, stands as it is. An articleBody is looked for only on a page with microdata items
    (`has_items`): the attribute selector walks the whole page, and costs more than the rest."""
    main = _main_element(tree, has_items)
    text = main.text(separator=" ")[:MAIN_TEXT_CHARS] if main is not None else ""
    if not text or text.isspace():
        return 0
    main_id, size, skipped = main.mem_id, len(text), set()
    kept, at = [], 0
    for node in main.css(_SKIPPED)[:_MAX_SKIPPED]:
        inner = node.text(separator=" ")
        if not inner or inner.isspace():
            continue
        node_id = node.mem_id
        nested = _inside_skipped(node, skipped, main_id)
        skipped.add(node_id)
        if nested:
            continue
        where = find(text, inner, at)
        if where < 0:
            continue
        end = where + len(inner)
        if not ((where == at or text[where - 1] == " ") and (end == size or text[end] == " ")):
            bounded = text.find(f" {inner} ", at)     # where it stands: between separators, as a whole
            if bounded >= 0:
                where, end = bounded + 1, bounded + 1 + len(inner)
        kept.append(text[at:where])
        at = end
    kept.append(text[at:])
    return words("".join(kept))


def _main_element(tree, has_items: bool):
    """The first articleBody (only with `has_items`), else the first <article>, else the first
    <main>, else <body> (the tree's own: no walk for it)."""
    looked_for = MAIN_TEXT_ELEMENTS[:-1] if has_items else MAIN_TEXT_ELEMENTS[1:-1]
    return next((n for n in map(tree.css_first, looked_for) if n is not None), None) or tree.body


_PREFIX = 32       # characters of a long text looked for first (see `find`)
_PREFIX_TRIES = 8  # places where the prefix stands that are tried before str.find takes over


def find(text: str, part: str, start: int) -> int:
    """text.find(part, start), quicker for a long part that stands soon after `start` (a page's
    scripts and styles in its main text): str.find first reads the whole of a long part (two-way
    search), this looks for its first _PREFIX characters and compares the rest where they stand,
    at most _PREFIX_TRIES times (then str.find from there: no worse than it on a hostile text)."""
    if len(part) <= 2 * _PREFIX:
        return text.find(part, start)
    prefix = part[:_PREFIX]
    at = text.find(prefix, start)
    for _ in range(_PREFIX_TRIES):
        if at < 0 or text.startswith(part, at):
            return at
        at = text.find(prefix, at + 1)
    return text.find(part, at) if at >= 0 else -1


def _inside_skipped(node, skipped: set[int], main_id: int) -> bool:
    """Whether one of the node's ancestors below the main element, within _MAX_DEPTH_UP, is a
    skipped element with text (one without has none inside it: only those are in `skipped`)."""
    parent, depth = node.parent, 0
    while parent is not None and depth < _MAX_DEPTH_UP:
        parent_id = parent.mem_id
        if parent_id == main_id:
            return False
        if parent_id in skipped:
            return True
        parent, depth = parent.parent, depth + 1
    return False


def etree_words(root, has_items: bool) -> int:
    """Document.main_words from an etree: the first element of each MAIN_TEXT_ELEMENTS kind found in
    one walk, the text of the best, without the skipped elements (iterative: hostile pages nest deep); an
    articleBody only with `has_items`, as `lexbor_words`."""
    found: dict[int, object] = {}
    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str):
            continue
        kind = (0 if has_items and "articlebody" in str(el.get("itemprop", "")).lower().split()
                else {"article": 1, "main": 2, "body": 3}.get(tag))
        if kind is not None:
            found.setdefault(kind, el)
            if kind == 0:
                break
    if not found:
        return 0
    parts, size, stack = [], 0, [found[min(found)]]
    while stack and size < MAIN_TEXT_CHARS:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            size += len(item)
            continue
        if not isinstance(item.tag, str) or item.tag in MAIN_TEXT_SKIPPED or item.tag.startswith("{"):
            continue
        if item.text:
            parts.append(item.text)
        for child in reversed(item):
            if child.tail:
                stack.append(child.tail)
            stack.append(child)
    return words(" ".join(parts))
