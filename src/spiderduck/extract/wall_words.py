"""The words and markers walls.py reads a wall by, in the languages walls are written in.

- TCF_MARKERS: the IAB Transparency & Consent Framework's stub, the API a consent manager puts
  on a page before its dialog (`__tcfapi` and its `__tcfapiLocator` iframe, v1's `__cmp`, the
  Global Privacy Platform's `__gppLocator`). Most European news pages carry it beside their
  content, so it is a sign of a consent manager, never a wall by itself.
- PRIVACY_DIALOG: what a consent manager's card says: its heading ("We value your privacy",
  "Ihre Privatsphäre ist uns wichtig", "Vos données, votre choix") and the TCF's own texts ("We
  and our partners", "Store and/or access information on a device"). A privacy policy, a contact
  form's note say these too: they count only on a page of few words (`privacy_words` reads a
  bounded prefix of a text, lower-cased, each phrase at the start of a word).
- PRIVACY_TITLE: what a title or heading about privacy, cookies or settings holds ("Privacy |
  Coast News", "Datenschutzeinstellungen"): such a page says the card's words as its content.
- TITLE_WORDS: the words of a wall's own title ("Log in", "Anmelden", "Iniciar sesión",
  "Cookies", "Welcome", and the small words between them): a title made only of the site's
  names and these words is the site's, not the page's (`site_title`). LOGIN_TITLE: such a title
  that asks the reader to log in (`login_title`).

Titles are split into words on what is not a letter or a digit ("Log in • Instagram" is `log`,
`in`, `instagram`) and matched word by word (`only_words`): "AI", "Idea" or "Todo" are no run
of "a", "i", "de", "to", "do". Only inside one word are title words and site names joined: in a
script written without spaces (ログイン, 登录注册), and in a compound of words of at least COMPOUND
letters each ("Datenschutzeinstellungen"). Site names are compared `folded` (lower case, letters
and digits only: "Coast News" is "coastnews"), over one or more words of the title.
"""
from __future__ import annotations

import re

TCF_MARKERS = ("__tcfapi", "__cmplocator", "__cmp(", "__gpplocator")
# A field to type in: a form or dialog holding one is filled in (contact, newsletter), no consent card.
TEXT_FIELDS = "textarea, input" + "".join(f":not([type={t} i])" for t in ("checkbox", "radio", "hidden", "submit",
                                                                         "button", "image", "reset"))

_PRIVACY_PHRASES = (
    # en
    r"we (?:value|respect|care about) your privacy", r"your privacy (?:is important|matters)",
    r"we and our (?:\d+ )?(?:partners|vendors)", r"store and/or access information on a device",
    # de
    r"wir (?:respektieren|schätzen|achten) (?:ihre|deine) privatsphäre",
    r"(?:ihre|deine) privatsphäre ist uns wichtig", r"wir und unsere (?:\d+ )?partner",
    r"informationen auf einem gerät speichern und/oder abrufen",
    # fr
    r"nous (?:respectons|protégeons) votre vie privée", r"le respect de votre vie privée",
    r"votre vie privée (?:est importante|compte)", r"vos données,? votre choix",
    r"nous et nos (?:\d+ )?partenaires", r"stocker et/ou accéder à des informations sur un appareil",
    # es
    r"(?:valoramos|respetamos) (?:tu|su) privacidad", r"(?:tu|su) privacidad es importante",
    r"nosotros y nuestros (?:\d+ )?(?:socios|partners)", r"almacenar (?:la )?información en un dispositivo",
    # it
    r"la (?:tua|sua) privacy è importante", r"rispettiamo la (?:tua|sua) privacy",
    r"noi e i nostri (?:\d+ )?(?:partner|fornitori)", r"archiviare e/o accedere a informazioni su un dispositivo",
    # nl
    r"(?:wij|we) hechten (?:veel )?waarde aan (?:uw|je|jouw) privacy", r"(?:uw|je|jouw) privacy is belangrijk",
    r"wij en onze (?:\d+ )?partners", r"informatie op een apparaat opslaan en/of openen",
    # pt
    r"(?:valorizamos|respeitamos) a (?:sua|tua) privacidade", r"a (?:sua|tua) privacidade é importante",
    r"nós e os nossos (?:\d+ )?parceiros", r"armazenar e/ou aceder a informações num dispositivo",
    # sv, da, nb, pl, fi, cs, tr
    r"vi värnar om din integritet", r"din integritet är viktig", r"vi och våra (?:\d+ )?partner",
    r"vi (?:værdsætter|respekterer) dit privatliv", r"vi og vores (?:\d+ )?partnere",
    r"vi (?:bryr oss om|respekterer) ditt personvern", r"vi og våre (?:\d+ )?partnere",
    r"cenimy (?:twoją|państwa) prywatność", r"(?:twoja|państwa) prywatność jest dla nas ważna",
    r"my i nasi (?:\d+ )?partnerzy", r"arvostamme yksityisyyttäsi", r"me ja kumppanimme",
    r"vážíme si vašeho soukromí", r"vaše soukromí je pro nás důležité", r"gizliliğinize (?:önem|değer) veriyoruz",
)
# Lower case (the text is lower-cased before it is read), each phrase at the start of a word: a
# search tries few branches inside words, about 0.3 ms for 8 KB of text.
PRIVACY_DIALOG = re.compile(r"\b(?:" + "|".join(_PRIVACY_PHRASES) + ")")

PRIVACY_TITLE = ("privacy", "privacid", "privatsph", "datenschutz", "cookie", "consent", "einwillig", "zustimmung",
                 "setting", "einstellung", "confidentialit", "vieprivée", "paramètre", "configura", "definiç",
                 "ajuste", "impostazion", "instelling", "integritet", "privatliv", "personvern", "inställning",
                 "prywatno", "soukrom", "gizlilik", "yksityisyy", "tietosuoja", "gdpr", "rgpd", "dsgvo")

_TITLE_WORDS = (
    # en (and the words common to many languages)
    "log in", "log on", "login", "logon", "sign in", "sign up", "sign on", "register", "create an account",
    "account", "accounts", "access", "password", "forgot", "member", "members", "only", "required", "welcome",
    "back", "home", "cookie", "cookies", "consent", "privacy", "settings", "before", "please", "you", "your",
    "my", "continue", "or", "and", "to", "with", "the", "page",
    # de
    "anmelden", "anmeldung", "einloggen", "registrieren", "registrierung", "konto", "benutzerkonto",
    "willkommen", "startseite", "datenschutz", "privatsphäre", "einstellungen", "einwilligung", "zustimmung",
    "weiter", "jetzt", "bitte", "bei", "zu", "mit", "und", "oder", "ihre", "ihr", "dein", "deine", "mein",
    # fr
    "connexion", "se connecter", "connectez-vous", "identifiez-vous", "s'identifier", "inscription",
    "s'inscrire", "compte", "mon", "bienvenue", "accueil", "confidentialité", "vie privée", "paramètres",
    "continuer", "avant", "sur", "à", "a", "et", "ou", "votre", "vos", "de", "du", "le", "la", "les",
    # es, pt
    "iniciar sesión", "inicia sesión", "iniciar sessão", "inicie sessão", "entrar", "acceder", "acessar",
    "aceder", "regístrate", "registrarse", "registro", "registo", "cadastro", "cuenta", "conta", "mi", "minha",
    "bienvenido", "bienvenida", "bem-vindo", "bem-vinda", "inicio", "início", "privacidad", "privacidade",
    "configuración", "configurações", "definições", "continuar", "antes", "en", "em", "y", "e", "o", "tu",
    "su", "sua", "seu", "el",
    # it
    "accedi", "accesso", "entra", "registrati", "registrazione", "benvenuto", "benvenuti", "impostazioni",
    "continua", "prima", "di", "al", "il", "tuo", "tua",
    # nl
    "inloggen", "aanmelden", "registreren", "welkom", "instellingen", "doorgaan", "mijn", "bij", "op", "of",
    "je", "uw", "het",
    # sv, da, nb, fi
    "logga in", "log ind", "logg inn", "registrera", "skapa konto", "välkommen", "velkommen", "integritet",
    "privatliv", "personvern", "inställningar", "fortsätt", "till", "til", "på", "och", "og", "eller", "din",
    "ditt", "kirjaudu", "kirjaudu sisään", "rekisteröidy", "tervetuloa",
    # pl, cs, tr, ru, ja, zh, ko
    "zaloguj", "zaloguj się", "logowanie", "zarejestruj", "rejestracja", "witamy", "prywatność", "do", "i",
    "lub", "přihlásit", "přihlášení", "registrace", "účet", "vítejte", "giriş", "giriş yap", "kaydol", "hesap",
    "войти", "вход", "регистрация", "аккаунт", "ログイン", "登录", "登入", "注册", "로그인",
)

LOGIN_TITLE = re.compile(
    r"\blog ?(?:in|on)\b|\bsign (?:in|on)\b|\banmeld|\beinlogg|\bconnexion\b|\bse connecter\b|\bidentifiez"
    r"|\binicia(?:r)? (?:sesión|sessão)|\binicie sessão\b|\bentrar\b|\bacceder\b|\bacessar\b|\baccedi\b"
    r"|\binloggen\b|\baanmelden\b|\blogga in\b|\blog ind\b|\blogg inn\b|\bkirjaudu\b|\bzaloguj\b"
    r"|\blogowanie\b|\bpřihlá|\bgiriş yap|\bвойти\b|\bвход\b|ログイン|登录|登入|로그인", re.I)


def folded(text: str) -> str:
    """Lower case, letters and digits only: "Log in • Instagram" -> "logininstagram"."""
    return "".join(c for c in text.casefold() if c.isalnum())


SHORT = 120            # characters of a title or description compared with the site's names
COMPOUND = 4           # letters of each title word inside a compound word ("datenschutz|einstellungen")
_SHORTEST_NAME = 3     # a site name shorter than this is not looked for inside a description
_NAME_WORDS = 8        # words of a title a site's name may span ("Ana's Blog" is `ana`, `s`, `blog`)
_WORD = re.compile(r"[^\W_]+")
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def words(text: str) -> list[str]:
    """The words of a text, lower case: "Log in • Instagram" -> ['log', 'in', 'instagram']."""
    return _WORD.findall(text.casefold())


TITLE_PHRASES = frozenset(tuple(words(w)) for w in _TITLE_WORDS)
TITLE_WORDS = frozenset(p[0] for p in TITLE_PHRASES if len(p) == 1)
_LONGEST = max(len(p) for p in TITLE_PHRASES)


def only_words(title: str, names: set[str] | frozenset[str] = frozenset(), phrases=TITLE_PHRASES) -> bool:
    """Whether a title is a run of title words (`phrases`) and the site's `names` (folded), with
    nothing else ('' is), matched word by word (see the module's docstring)."""
    said = words(title[:SHORT * 4])
    reached = {0}
    for at, word in enumerate(said):
        if at not in reached:
            continue
        reached.update(at + n for n in range(1, _LONGEST + 1) if tuple(said[at:at + n]) in phrases)
        joined = ""
        for end in range(at, min(len(said), at + _NAME_WORDS)):
            joined += said[end]
            if joined in names:
                reached.add(end + 1)
        if at + 1 not in reached and _compound(word, names, phrases):
            reached.add(at + 1)
    return len(said) in reached


def _compound(word: str, names: set[str] | frozenset[str], phrases) -> bool:
    """Whether one word is title words and names joined: in a script without spaces, any; else
    each of at least COMPOUND letters. A split, not a regular expression: no backtracking."""
    unspaced = _UNSPACED.search(word) is not None
    if not unspaced and len(word) < 2 * COMPOUND:
        return False                # one word alone is a phrase or a name, read before (`only_words`)
    singles = TITLE_WORDS if phrases is TITLE_PHRASES else (p[0] for p in phrases if len(p) == 1)
    shortest = 1 if unspaced else COMPOUND
    parts = [w for w in (*singles, *names) if len(w) >= shortest and w in word]
    reached = {0}
    for at in range(len(word)):
        if at in reached:
            reached.update(at + len(p) for p in parts if word.startswith(p, at))
    return len(word) in reached


def site_title(title: str, names: set[str]) -> bool:
    """Whether a title is only the site's names (folded) and a wall's own words ("Log in •
    Instagram", "Anmelden | Portal", "Welcome to Portal"): the site's, not the page's."""
    return len(folded(title[:SHORT * 4])) <= SHORT and only_words(title, names)


def site_description(description: str, names: set[str]) -> bool:
    """Whether a description (of a page without a title of its own) is the site's: its name, or
    a tagline that names it."""
    said = folded(description[:SHORT * 4])
    return said in names or any(len(name) >= _SHORTEST_NAME and name in said for name in names)


def login_title(title: str, names: set[str]) -> bool:
    """Whether a title asks the reader to log in and is only that and the site's names."""
    return LOGIN_TITLE.search(title[:SHORT]) is not None and site_title(title, names)


def privacy_words(text: str, limit: int) -> str:
    """A consent manager's words (PRIVACY_DIALOG) in the first `limit` characters of a text, or ''."""
    head = text[:limit]
    lowered = head.lower()
    found = PRIVACY_DIALOG.search(lowered)
    if found is None:
        return ""
    return (head if len(head) == len(lowered) else lowered)[found.start():found.end()]


def privacy_title(title: str) -> bool:
    """Whether a title or heading is about privacy, cookies or settings (PRIVACY_TITLE)."""
    said = folded(title[:SHORT * 4])
    return any(stem in said for stem in PRIVACY_TITLE)


def own_heading(h1: str, names: set[str]) -> bool:
    """Whether a page's <h1> is its own: not the site's name and a wall's words ("Log in",
    "Portal"), nor a consent manager's ("We value your privacy"). A page showing one says what it
    is, and its description is its own."""
    return bool(h1) and not site_title(h1, names) and not privacy_words(h1, SHORT * 4)


def content_heading(h1: str, names: set[str]) -> bool:
    """Whether a page's <h1> names content, not a consent card: not the site's name alone, not
    about privacy or cookies, nor a consent manager's words ("Welcome", "Contact us" name content)."""
    return (bool(h1) and not only_words(h1, names, frozenset()) and not privacy_title(h1)
            and not privacy_words(h1, SHORT * 4))
