"""One author value's names (for authors.py): a meta's, a JSON-LD name's, a link's or a byline's text.

    names(value, page)         -> the names a value states: none, one, or several, in order
    byline_names(text, page)   -> the same for a byline's text in the page, read more strictly

`page` is what a value is read against (`Page`): the site's names and the page's language. The
rules are the module docstring's of authors.py. Every one runs on every page that names an
author, so each is one compiled pattern or a set look-up, tried in order, and each stops early: a
value's wording before the name (`_DATED_LEAD`, `_BY`), then what ends the name (`_CUT`: a date's
wording), then the parts between separators (`_SEPARATOR`), the first the name and each after it a
tail to drop (`_tail`: a date, a role, a degree, an agency, the site) or more names of a list
(`A, B and C`, split at the little words of a list in the byline's language: `_reading`).
"""
from __future__ import annotations

import functools
import html
import json
import re
from typing import NamedTuple

from spiderduck.extract import values
from spiderduck.extract.typography import typeset

AUTHOR_MAX = 128          # characters; longer "authors" are sentences, not names
BYLINE_WORDS = 6          # words at most of one name in a byline's text
_MAX_NAMES = 8            # names one value lists at most


class Page(NamedTuple):
    """What a value is read against: the site's names as `key` gives them (one after a person's
    name is dropped), and the page's language (`<html lang>`'s primary subtag, `es`; '' unknown)."""
    site: frozenset[str] = frozenset()
    lang: str = ""


_URL_LIKE = re.compile(r"^(?:https?:)?//|^www\.", re.I)
# A byline's wording before the name, in the languages it is written in (issue 42): `By`, `Written
# by`, `Por`, `Par`, `Von` and `vom`, `Door`, `Av`/`Af`, `di`, `a cura di`, `scritto da`, and the
# labels `Author:`, `Autor:`, `Auteur :`. The words that begin names too are taken only where a
# name cannot begin so: `di` and `von` in lower case before two words or more (`Di Maio`, `von
# Miller`, `di Stefano` are names), a capitalised `Von` or `Av` before two capitalised words (`Von
# der Leyen` is a name), `da` after `scritto`/`pubblicato`; a capitalised `Di` so only in a byline's
# text in the page (`_BY_BYLINE`), as a meta's is a name (`Di Maio Luigi`, `Di Jian Ming`).
_CAPITAL = "A-ZÀ-ÖØ-ÞĀ-ſ"
_BY_WORDING = (
    r"^(?:(?:written|posted|published|story|reporting|escrito|publicado|écrit|publié|rédigé)\s+)?(?:by|por|par)\s+"
    r"|^(?:(?:geschrieben|verfasst|ein\s+beitrag)\s+von|vom|(?-i:von)(?=\s+\S+\s+\S)"
    rf"|(?-i:Von(?=\s+[{_CAPITAL}]\S*\s+\S)))\s+"
    r"|^(?:geschreven\s+)?door\s+"
    rf"|^(?:(?:skrevet|skriven|skrivet)\s+(?:av|af)|(?:av|af)(?-i:(?=\s+[{_CAPITAL}]\S*\s+\S)))\s+"
    r"|^(?:(?:scritto|pubblicato)\s+da|a\s+cura\s+di|(?-i:di)(?=\s+\S+\s+\S))\s+"
    r"|^(?:author|autor|autorin|auteur|autrice|autore|autora|verfasser|verfasserin|автор)\s*:\s*"
    r"|^@\s*")
_BY = re.compile(_BY_WORDING, re.I)
_BY_BYLINE = re.compile(rf"{_BY_WORDING}|^(?-i:Di)(?=\s+[{_CAPITAL}]\S*\s+[{_CAPITAL}])\s+", re.I)
# The languages a byline's first word says it is written in (`Por` -> Spanish or Portuguese), read
# before the page's (a site's template often states one language for all its pages).
_LEAD_LANGS = {word: langs for langs, words in (
    ("es pt", "por publicado autora"), ("es", "escrito"), ("fr", "par écrit publié rédigé auteur"), ("nl", "door"),
    ("de", "von vom geschrieben verfasst ein autorin verfasser verfasserin"), ("sv no", "av"), ("da", "af"),
    ("sv", "skriven skrivet"), ("no da", "skrevet"), ("it", "di scritto pubblicato a autore autrice"),
    ("nl", "geschreven")) for word in words.split()}
# A byline's words for its date, in its languages: what follows them is no name (`Jane Doe Published
# 3 March 2020`, `Posted on`), nor the date a little word introduces (`Jane Doe on March 3, 2020`,
# `von Anna Roth am 13.01.2020`, `Ana Díaz el 13 de enero`: in lower case, before a digit or a word
# in lower case and a digit: `Marine Le Pen`, `Jan van den Berg op 12 maart`). A byline's text is
# cut at any digit, at `in` (a place), and at `le`, `el` before no capital (`By Omar el Akkad`).
_DATE_WORDS = (r"(?:last\s+)?updated|published|posted|veröffentlicht|aktualisiert|publié|mis\s+à\s+jour|"
               r"actualisé|publicado|actualizado|atualizado|pubblicato|aggiornato|gepubliceerd|geplaatst|"
               r"bijgewerkt|publicerad|uppdaterad|publisert|oppdatert|opdateret|udgivet|opublikowano")
_DATE_WORDING = rf"(?:^|\s+|\s*[,|·•–—-]\s*)(?i:{_DATE_WORDS})\b"
_CUT = re.compile(rf"{_DATE_WORDING}|\s+on\s+(?=(?:\w+\.?,?\s+)?\d)"
                  r"|\s+(?:am|um|le|el|il|em|op|den)\s+(?=(?:[a-zß-öø-ÿ]\w*\.?,?\s+)?\d)")
_CUT_BYLINE = rf"{_DATE_WORDING}|\s+(?:on|am|um|il|em|op|in)\s+(?=\w)|\s+(?:le|el)\s+(?![{_CAPITAL}])(?=\w)|\d"
# The same date before the name (`Posted on March 3, 2020 by Jane Doe`, `Publié le 3 mars par X`).
_DATED_LEAD = re.compile(rf"^(?:{_DATE_WORDS})\b.{{0,60}}?\s(?:by|von|vom|par|por|door|da|di|av|af)\s+(?=\S)",
                         re.I)
# What separates a name from what follows it (`Jane Doe | Reporter`, `Jane Doe, dpa`, `Jane Doe -
# Correspondent`, `Jane Doe (Reuters)`, `Jane Doe · 5 min read`).
_SEPARATOR = re.compile(r"\s*[|·•;:()\[\]/]\s*|\s*,\s*|\s+-\s+|\s*[–—]\s*")
# The little words that join a list's names (`Jane Doe and John Roe`, `Anna Schmidt und Peter
# Müller`, `Иван Петров и Анна Смирнова`): each side two words or more (`José Ortega y Gasset`,
# `Johnson & Johnson` are one name), none a company's (`Jane Doe & Sons Ltd`). Some say "and" in
# some languages only and "in" or "at" in others, where a byline's text is cut before a capitalised
# word (a place: `Por Ana García en Buenos Aires`, `Di Mario Rossi a Los Angeles`, `Av Anna
# Svensson i New York`): each by its languages ('-': the page's is not known). `e` joins no names
# before a Portuguese surname (`Maria Silva e Santos Costa` is one; `Ana Paula e Maria Clara` two).
_AND_WORDS = "and|und|et|y|og|och|ja|&|и|і|та"
_AND_IN = {"e": "it pt -", "en": "nl af", "i": "pl cs sk ca hr sr bs", "a": "cs sk pl"}
_IN = {"en": "es fr", "a": "it es ca", "i": "sv no nb nn da", "à": "fr"}
_SURNAMES_AFTER_E = ("Silva|Santos|Souza|Sousa|Costa|Oliveira|Almeida|Castro|Melo|Mello|Lima|Cunha|Vasconcelos|"
                     "Albuquerque|Menezes|Sá|Faria|Moura|Cruz|Pereira|Ferreira|Rodrigues|Gomes|Martins|Carvalho|"
                     "Barros|Araújo|Ribeiro|Rocha|Freitas|Bastos|Brito|Mota|Azevedo|Barbosa|Pinto|Reis|Nunes|Lopes")


@functools.lru_cache(maxsize=64)
def _reading(lang: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """How a value is read in `lang` (space-separated; '' unknown): the little words between a list's
    names, one before its last name (`, and John Roe`), and what ends the name in a byline's text."""
    langs = set(lang.split()) or {"-"}
    words = [w for w, used in _AND_IN.items() if langs & set(used.split())]
    guarded = "e" in words and bool(langs & {"pt", "-"})
    joined = "|".join([_AND_WORDS] + [w for w in words if not (guarded and w == "e")])
    split = rf"\s+(?:{joined})\s+" + (rf"|\s+e\s+(?!(?:{_SURNAMES_AFTER_E})\b)" if guarded else "")
    lead = rf"^(?:{joined}{'|e' if guarded else ''})\s+"
    places = "|".join(w for w, used in _IN.items() if langs & set(used.split()))
    cut = _CUT_BYLINE + (rf"|\s+(?:{places})\s+(?=[{_CAPITAL}])" if places else "")
    return re.compile(split), re.compile(lead), re.compile(cut)


# A tail after a separator that is no name: a role (`Staff Writer`, `envoyée spéciale à Kiev`,
# `corresponsal`), a degree (`PhD`); one that is part of the name (`Jr.`).
_ROLE = re.compile(
    r"\b(?:reporter\w*|correspon\w*|corrispondent\w*|korrespondent\w*|writer|editor\w*|contribut\w*|"
    r"columnist\w*|colunista|columnista|editorialista|journalist\w*|giornalista|periodista|jornalista|"
    r"r[eé]da[ckçtz]\w*|staff|photograph\w*|fotograf\w*|producer|analyst|intern|freelance\w*|critic|reviewer|"
    r"anchor|host|envoy\w*|enviad[oa]|inviat[oa]|chroniqu\w*|colaborador\w*|collaborat\w*|verslaggever|"
    r"medewerk\w*|mitarbeiter\w*|medarbet\w*|volontär\w*|kommentator|pigiste|special\w*|spécial\w*|especial|"
    r"senior|chief|desk|bureau|guest|fellow|professor|founder|ceo)\b", re.I)
_DEGREE = re.compile(r"(?:ph\.?\s?d|m\.?d|d\.?\s?phil|mba|m\.?sc|b\.?sc|m\.?a|b\.?a|rn|esq|cpa|llm|mph|"
                     r"dr\.?\s?med)\.?", re.I)
_GENERATION = re.compile(r"(?:[JS]r|[JS]nr|jr|sr)\.?|II|III|IV")
# News agencies: the author of a story they wrote, but not where a person is named (authors.py).
_AGENCY_NAMES = """dpa|AFP|Reuters|AP|Associated Press|The Associated Press|Agence France-Presse|
Deutsche Presse-Agentur|dpa-AFX|epd|KNA|APA|SDA|Keystone-SDA|SID|EFE|Agencia EFE|Europa Press|ANSA|Adnkronos|
AGI|ANP|Belga|TT|NTB|Ritzau|PAP|ČTK|TASR|MTI|Lusa|Agência Lusa|Xinhua|Kyodo|Kyodo News|Yonhap|PTI|IANS|ANI|AAP|UPI|Bloomberg News|Anadolu|
Anadolu Agency|TASS|Interfax|Jiji|Jiji Press|Canadian Press|The Canadian Press|Reuters Staff|AP Staff|AFP Staff"""
_NOT_WORD = re.compile(r"[\W_]+")
_AGENCY_SPLIT = re.compile(r"\s*[/,&+]\s*|\s+(?:and|und|et|y)\s+")


def key(name: str) -> str:
    """A name as compared with another (`Deutsche Presse-Agentur` -> deutschepresseagentur)."""
    return _NOT_WORD.sub("", name.casefold())


_AGENCIES = frozenset(key(name) for name in _AGENCY_NAMES.replace("\n", "").split("|"))


def is_agency(name: str) -> bool:
    """Whether a name is a news agency's, or several's (`dpa`, `AFP/dpa`, `The Associated Press`)."""
    return all(key(part) in _AGENCIES for part in _AGENCY_SPLIT.split(name))


# A link's wording around a name: "See all posts by X", "More from X", "View X's profile".
_LINK_WORDING = re.compile(
    r"^(?:(?:see|view|read|browse|show|explore)\s+)?(?:(?:all|more)\s+)?"
    r"(?:(?:posts|articles|stories|entries|content|news|work|writing)\s+)?(?:by|from)\s+(?P<a>.+)$"
    r"|^(?:(?:see|view)\s+)?(?P<b>.+?)[’']s\s+(?:profile|posts|articles)$", re.I)
# A link's wording with no name in it.
_NO_NAME = frozenset("""view profile|view full profile|profile|author profile|read more|more|follow|
follow me|about the author|bio|contact|email|see all posts|view all posts|all posts|more posts|
more articles|more stories|posts|articles""".replace("\n", "").split("|"))
_PLACEHOLDERS = frozenset("""no author|unknown|unknown author|admin|administrator|null|none|undefined|
n/a|by|author|webmaster|root|default|user|nobody|autor|autorin|auteur|autore|autora|von|vom|door|
por|par|di|av|af""".replace("\n", "").split("|"))
# A comment form's labels, taken for a byline where the form's fields carry an author class
# (`<label class="comment-author">Name *</label>`): no name, in the languages they are written in.
_FORM_LABELS = frozenset("""name|your name|full name|name (required)|nickname|e-mail|email|your email|
email address|website|url|comment|your comment|nom|votre nom|prénom|nombre|tu nombre|nome|il tuo nome|
naam|je naam|namn|navn|vorname|nachname|dein name|ihr name|kommentar|commentaire|comentario|
commento|imię|jméno""".replace("\n", "").split("|"))
_FORM_FIRST_WORDS = frozenset(label.split()[0] for label in _FORM_LABELS)
_REQUIRED_MARK = re.compile(r"\s*[*(]?\s*(?:\*|required|obligatoire|obligatorio|obbligatorio|pflichtfeld|"
                            r"erforderlich|verplicht)\s*\)?\s*:?$", re.I)
_HANDLE_AFTER = re.compile(r"(?<=\S)\s*(?:\(\s*@[\w.]{1,30}\s*\)|@[\w.]{1,30})$")
_AGO = re.compile(r"\d.*\b(?:ago|hace|il y a)\b|\bhace\s+\d|\bil y a\s+\d|\bvor\s+\d+\s+\w+$", re.I)
_TRAILING_MARKS = re.compile(r"\s*[»›→>|·•:,-]+$")


def names(value: str, page: Page = Page()) -> list[str]:
    """The names in one value (see authors.py's docstring): none, one, or several."""
    if not value:
        return []
    text = value.strip()
    if text[:1] in ("{", "["):
        return _json_names(text, page)
    for _ in range(3):        # entities, twice-escaped ones too (`&amp;oacute;`)
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    return _names(values.fold(text), page, byline=False)


def byline_names(text: str, page: Page = Page()) -> list[str]:
    """The names a byline's text in the page states: as `names`, but what follows the name is
    dropped unless it is more names (`By Jane Doe, New York` -> Jane Doe), each name two to
    `BYLINE_WORDS` words (one when it says `By`), and a text with a longer one is none (a
    sentence), as is one that starts with a dash: a quotation's (`—Jane Doe of Acme`)."""
    if text[:1] in "—―–":
        return []
    explicit = stated(text)
    found = _names(text, page, byline=True)
    if not all(1 < len(n.split()) <= BYLINE_WORDS or (explicit and len(n.split()) == 1) for n in found):
        return []
    return found


def stated(text: str) -> bool:
    """Whether a byline's text in the page says it is one (`By Jane Doe`, `Posted on March 3 by
    Jane Doe`)."""
    return bool(_BY_BYLINE.match(text) or _DATED_LEAD.match(text))


def _json_names(text: str, page: Page) -> list[str]:
    """The names of a JSON object or list written as a string; none if it is not JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    found = []
    for item in data if isinstance(data, list) else [data]:
        item = item.get("name") if isinstance(item, dict) else item
        found.extend(names(item, page) if isinstance(item, str) else [])
    return found


def _names(text: str, page: Page, byline: bool) -> list[str]:
    """A value's names, without a byline's or a link's wording (see the module's docstring)."""
    if not text or _URL_LIKE.match(text) or len(text) > AUTHOR_MAX:
        return []
    text = _TRAILING_MARKS.sub("", text)
    if text.casefold() in _NO_NAME:
        return []
    m = _LINK_WORDING.match(text)
    if m:
        text = (m["a"] or m["b"]).strip()
    text = _DATED_LEAD.sub("", _HANDLE_AFTER.sub("", text), 1)
    lang = page.lang
    m = (_BY_BYLINE if byline else _BY).match(text)
    if m:
        text, lang = text[m.end():], _LEAD_LANGS.get(m[0].split(None, 1)[0].casefold(), lang)
    split, lead, cut = _reading(lang)
    text = (cut if byline else _CUT).split(text, 1)[0].strip()
    parts, ends = _parts(text)
    if not parts:
        return []
    found = _split(parts[0], split)
    person = all(map(looks_like_person, found))
    timed = not person and not byline    # the value, as a whole, was asked whether it is a time
    if timed and (text.casefold() in _PLACEHOLDERS or _is_time(text)):
        return []
    kept, end, skipped = parts[:1], ends[0], False
    for part, part_end in zip(parts[1:], ends[1:]):
        tail = _tail(part, page.site)
        if tail == _DROP:
            break
        if tail == _ROLE_OF or (tail == _ORG and person):    # a person's role or agency: names may follow
            skipped = True
        elif skipped and not _people(part[j.end():] if (j := lead.match(part)) else part, split):
            break                                               # `Max Mustermann, dpa, Berlin`
        else:
            kept.append(part)
            end = part_end
    if len(kept) > 1:
        listed, listing = _listed(kept, split, lead)
        if listing and (byline or listing == len(kept)):
            found = listed
        elif not byline:     # what follows is neither dropped nor more names: the value as it is
            found = [text if end == ends[-1] else text[:end]]
    found = [name for name in (_finish(n, timed and n == text) for n in found[:_MAX_NAMES]) if name]
    return [n for i, n in enumerate(found) if n not in found[:i]]


def _parts(text: str) -> tuple[list[str], list[int]]:
    """The parts of a text between separators, and where each ends; a generation (`Jr.`) is its
    name's (`Martin Luther King, Jr.`)."""
    parts: list[str] = []
    ends: list[int] = []
    start = 0
    for m in [*_SEPARATOR.finditer(text), None]:
        end = m.start() if m else len(text)
        part = text[start:end]
        if part and parts and _GENERATION.fullmatch(part):
            parts[-1] += ", " + part
            ends[-1] = end
        elif part:
            parts.append(part)
            ends.append(end)
        start = m.end() if m else end
    return parts, ends


_DROP, _ROLE_OF, _ORG = "drop", "role", "org"
_DIGIT = re.compile(r"\d")


def _tail(part: str, site: frozenset[str]) -> str:
    """What a part after the name is: `_DROP` (a date, a reading time: never a name, nor what
    follows it), `_ROLE_OF` (a role, a degree: never a name), `_ORG` (an agency, the site: dropped
    after a person's name), or '' (a name, a place)."""
    if _DIGIT.search(part) or _CUT.match(part):
        return _DROP
    if _is_role(part) or _DEGREE.fullmatch(part):
        return _ROLE_OF
    return _ORG if is_agency(part) or key(part) in site else ""


def _is_role(part: str) -> bool:
    """Whether a part is a role: one that begins with a role's word (`Senior Writer`, `envoyée
    spéciale à Kiev`), holds two (`Times Staff Writer`) or one in lower case (`BBC News reporter`);
    not a name that ends with one (`Jennifer Senior`, `Katy Guest`)."""
    found = _ROLE.findall(part)
    return bool(found) and (len(found) > 1 or found[0][:1].islower() or _ROLE.match(part) is not None)


def _listed(parts: list[str], split: re.Pattern[str], lead_word: re.Pattern[str]) -> tuple[list[str], int]:
    """The names of parts that list them (`A, B and C`, `A, B, and C`), up to the last part joined
    by a little word (`_reading`), and how many parts that is: 0 when no list is written so."""
    found: list[str] = []
    last = listed = 0
    for i, part in enumerate(parts):
        lead = lead_word.match(part)
        people = _people(part[lead.end():] if lead else part, split)
        if not people:
            break
        found += people
        if lead or len(people) > 1:
            last, listed = i + 1, len(found)
    return found[:listed], last


def _split(part: str, split: re.Pattern[str]) -> list[str]:
    """A part's names, split at the little words of a list when each side is two words or more,
    the first capitalised, the last no company's (`Ana García y Luis Pérez`; not `José Ortega y
    Gasset`, `Peter Müller & Anna Schmidt GmbH`)."""
    sides = split.split(part)
    if len(sides) > 1 and all(_name_like(side) for side in sides):
        return sides
    return [part]


def _people(part: str, split: re.Pattern[str]) -> list[str]:
    """A part's names if they all read as persons' (`looks_like_person`), else none."""
    found = _split(part, split)
    return found if all(map(looks_like_person, found)) else []


def _name_like(side: str) -> bool:
    """Whether a side of a list's little word begins as a name does: a capital (or a letter of a
    script without: `محمد`), a particle."""
    words = side.split()
    if not 2 <= len(words) <= BYLINE_WORDS or words[-1].casefold().replace(".", "") in _COMPANY:
        return False
    return words[0][:1].isalpha() and not words[0][:1].islower() or words[0].casefold() in PARTICLES


def _finish(name: str, timed: bool = False) -> str:
    """One name as given, or '' when it is no name (a placeholder, a form's label, a date: unless
    `timed`, it was asked already)."""
    name = _TRAILING_MARKS.sub("", name).strip()
    if not name or name.casefold() in _PLACEHOLDERS or (not timed and _is_time(name)) or _is_form_label(name):
        return ""
    return typeset(name)


# The little words of names (`Ursula von der Leyen`, `Ana de la Cruz`); a company's last words; and
# words that are a byline's or a page's, never a person's (`Updated March`, `About Us`, `Share this`),
# in the languages a heading capitalises them in (`Weitere Nachrichten`, `Más noticias`).
PARTICLES = frozenset("""von van der den de da di do dos das du del della la le bin ibn al el ter ten zu af av
y e""".split())
_COMPANY = frozenset("ltd limited gmbh inc llc llp plc ag sa spa srl sarl sas bv nv kg ohg corp ltda limitada".split())
_NOT_NAME_WORDS = frozenset("""updated published posted share about us contact read more follow subscribe
sign login home news newsletter comments comment reply weitere nachrichten mehr artikel beiträge themen
redaktion más noticias artículos plus articles autres actualités altri altre notizie articoli nieuws artikelen
nyheter artiklar fler flere nyheder artikler więcej wiadomości artykuły ещё новости статьи""".split()) | _COMPANY


def looks_like_person(name: str) -> bool:
    """Whether a name reads as a person's: two to `BYLINE_WORDS` words, each capitalised (or in a
    script without capitals) or a name's particle, none a byline's or a page's other words, nor a
    company's, no digits (`Jane Doe`, `Ana de la Cruz`, `محمد علي`; not `qué el gobierno`, `the
    numbers`, `Updated March`, `Weitere Nachrichten`, `Anna Schmidt GmbH`)."""
    words = name.split()
    if not 2 <= len(words) <= BYLINE_WORDS or _DIGIT.search(name):
        return False
    for word in words:
        folded = word.casefold()
        if folded in _NOT_NAME_WORDS or not (word[:1].isalpha() and not word[:1].islower() or folded in PARTICLES):
            return False
    return True


def _is_form_label(name: str) -> bool:
    """Whether a "name" is a form's label or placeholder (`Name *`, `Your name (required)`, `E-mail:`)."""
    if name.split(None, 1)[0].casefold().rstrip("*:(") not in _FORM_FIRST_WORDS:
        return False
    return _REQUIRED_MARK.sub("", name).strip().rstrip(":").strip().casefold() in _FORM_LABELS


def _is_time(name: str) -> bool:
    """Whether a "name" is a date, a time or a number (a comment's timestamp, an id): none
    without a digit (most names: asked first, as parsing a date costs the most)."""
    if not _DIGIT.search(name):
        return False
    return (sum(c.isdigit() for c in name) > sum(c.isalpha() for c in name) or bool(_AGO.search(name))
            or bool(values.rfc3339(name, text=True)) or bool(values.rfc3339(name)))
