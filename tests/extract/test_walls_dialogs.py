"""Issue 42's two walls that passed as pages (spiderduck.extract.walls), on hand-written pages in
many languages, and their near-misses:

- a consent manager's dialog that is the whole page: the IAB TCF stub and a "We value your
  privacy" card, under a title that is only the site's name;
- a login form page whose description is the site's tagline, under a title that is the site's
  name or a login title ("Anmelden • Portal").
"""
from __future__ import annotations


import pytest

from spiderduck.extract import extract_page
from spiderduck.extract.parsers import parse
from spiderduck.extract.wall_words import only_words, privacy_words
from spiderduck.extract.walls import CARD_CHARS, FEW_CHARS, detect
from support.extraction import EXTRACTION

NEWS = "https://www.coast.test/2026/11/harbour-wall"
SOCIAL = "https://www.portal.test/p/Cx1"

TCF_STUB = ('<script>!function(){var w=window;if(!w.__tcfapi){var q=[];w.__tcfapi=function(){q.push(arguments)};'
            'var f=document.createElement("iframe");f.name="__tcfapiLocator";f.style.display="none";'
            'document.documentElement.appendChild(f)}}();</script>')
TCF_IFRAME = '<iframe name="__tcfapiLocator" style="display:none"></iframe>'
CMP_V1_STUB = ('<script>window.__cmp=function(c,a,cb){(window.__cmp.a=window.__cmp.a||[]).push([c,a,cb])};'
               'var i=document.createElement("iframe");i.name="__cmpLocator";document.body.appendChild(i);</script>')
GPP_STUB = ('<script>window.__gpp=function(){};var l=document.createElement("iframe");l.name="__gppLocator";'
            'document.documentElement.appendChild(l);</script>')


def page(head: str, body: str, lang: str = "en") -> bytes:
    return f'<!DOCTYPE html><html lang="{lang}"><head>{head}</head><body>{body}</body></html>'.encode()


def og(**props: str) -> str:
    return "".join(f'<meta property="og:{k}" content="{v}">' for k, v in props.items())


def wall(markup: bytes, url: str, parser: str = "selectolax"):
    return detect(markup, parse(markup, parser), 200, url)


def card(heading: str, text: str, buttons: tuple[str, str], element: str = '<div class="cmp-card" role="dialog"'
         ' aria-modal="true">', end: str = "</div>") -> str:
    return (f'{element}<h2>{heading}</h2><p>{text}</p><button>{buttons[0]}</button>'
            f'<button>{buttons[1]}</button>{end}')


def site_header(name: str) -> str:
    return f'<header><a href="/">{name}</a></header>'


# -- the consent manager's dialog as the whole page ------------------------------------------

CONSENT_DIALOGS = {
    "en-dialog": page(
        "<title>Coast News</title>" + TCF_STUB,
        site_header("Coast News") + card(
            "We value your privacy",
            "We and our partners store and/or access information on a device, such as unique identifiers in"
            " cookies, to process personal data. You may accept or manage your choices below, including your"
            " right to object where legitimate interest is used.", ("I accept", "More options"))),
    "de-card-in-no-dialog": page(
        '<title>Hafenblatt</title><meta name="application-name" content="Hafenblatt">' + TCF_STUB,
        site_header("Hafenblatt") + card(
            "Ihre Privatsphäre ist uns wichtig",
            "Wir und unsere Partner verarbeiten personenbezogene Daten wie Kennungen Ihres Geräts, um Inhalte"
            " zu personalisieren und die Nutzung zu messen. Ihre Auswahl können Sie jederzeit ändern.",
            ("Alle akzeptieren", "Einstellungen"), element='<div class="cmp-card">'), lang="de"),
    "en-card-under-the-hosts-name": page(
        "<title>COAST</title>" + TCF_STUB,
        card("We value your privacy", "We and our partners store and/or access information on a device.",
             ("Agree", "Disagree"), element='<div class="cmp-card">')),
    "de-tcf-v1": page(
        "<title>Hafenblatt</title>" + CMP_V1_STUB,
        card("Wir respektieren Ihre Privatsphäre",
             "Wir speichern Informationen auf Ihrem Gerät und verarbeiten Daten für personalisierte Werbung.",
             ("Zustimmen", "Ablehnen"), element="<form>", end="</form>"), lang="de"),
    "fr-tagline": page(
        "<title>La Gazette du Port</title>" + TCF_STUB
        + og(site_name="La Gazette du Port", title="La Gazette du Port",
             description="L'actualité des quais et de la ville, chaque jour."),
        card("Vos données, votre choix",
             "Nous et nos partenaires stockons et/ou accédons à des informations sur un appareil, telles que des"
             " identifiants, et traitons des données personnelles pour la publicité et la mesure d'audience.",
             ("Accepter et fermer", "Paramétrer")), lang="fr"),
    "fr-respect": page(
        "<title>Le Phare</title>" + TCF_IFRAME,
        card("Nous respectons votre vie privée", "Nous utilisons des traceurs pour mesurer l'audience.",
             ("Tout accepter", "Continuer sans accepter")), lang="fr"),
    "es-form": page(
        "<title>El Faro</title>" + TCF_IFRAME,
        card("Valoramos tu privacidad",
             "Nosotros y nuestros socios almacenamos o accedemos a información en un dispositivo y tratamos"
             " datos personales, como identificadores únicos, para anuncios y contenido personalizados.",
             ("Aceptar", "Más opciones"), element='<form action="/choices" method="post">', end="</form>"),
        lang="es"),
    "it-tagline": page(
        "<title>Il Porto</title>" + TCF_STUB
        + '<meta property="og:site_name" content="Il Porto">'
        + '<meta name="twitter:description" content="Notizie dal porto e dalla città, ogni giorno.">',
        card("La tua privacy è importante per noi",
             "Noi e i nostri fornitori archiviamo informazioni su un dispositivo e trattiamo dati personali.",
             ("Accetta", "Scopri di più e personalizza")), lang="it"),
    "nl-gpp": page(
        "<title>De Havenkrant</title>" + GPP_STUB,
        card("Wij hechten waarde aan uw privacy",
             "Wij en onze partners slaan informatie op een apparaat op en verwerken persoonsgegevens.",
             ("Akkoord", "Instellingen beheren"), element='<div role="alertdialog" class="cmp-card">'), lang="nl"),
    "pt-modal": page(
        "<title>O Farol</title>" + TCF_STUB,
        card("Valorizamos a sua privacidade",
             "Nós e os nossos parceiros armazenamos informações num dispositivo e tratamos dados pessoais.",
             ("Aceitar", "Mais opções")), lang="pt"),
    "sv": page(
        "<title>Hamnbladet</title>" + TCF_STUB,
        card("Vi värnar om din integritet",
             "Vi och våra partner lagrar information på en enhet och behandlar personuppgifter.",
             ("Godkänn alla", "Inställningar")), lang="sv"),
    "pl": page(
        "<title>Gazeta Portowa</title>" + TCF_STUB,
        card("Cenimy Twoją prywatność",
             "My i nasi partnerzy przechowujemy informacje na urządzeniu i przetwarzamy dane osobowe.",
             ("Akceptuję", "Więcej opcji")), lang="pl"),
}


@pytest.mark.parametrize("parser", ["selectolax", "html5lib"])
@pytest.mark.parametrize("name", list(CONSENT_DIALOGS))
def test_a_consent_managers_dialog_that_is_the_whole_page_is_a_consent_wall(name, parser):
    found = wall(CONSENT_DIALOGS[name], NEWS, parser)
    assert found is not None and found.kind == "consent_wall", found
    assert "IAB TCF stub" in found.reason and "consent manager's words" in found.reason


def test_the_reason_names_the_stub_the_dialogs_words_and_the_sites_tagline():
    found = wall(CONSENT_DIALOGS["es-form"], NEWS)
    assert found.reason.startswith("IAB TCF stub '__tcfapi'; consent manager's words 'Valoramos tu privacidad';"
                                   " forms hold 100% of the words; ")
    found = wall(CONSENT_DIALOGS["de-card-in-no-dialog"], NEWS)     # a plain <div>: no "dialog" in the reason
    assert found.reason.startswith("IAB TCF stub '__tcfapi'; consent manager's words 'Ihre Privatsphäre ist uns"
                                   " wichtig'; the site's title 'Hafenblatt'; ")
    found = wall(CONSENT_DIALOGS["fr-tagline"], NEWS)
    assert "consent manager's words 'Vos données, votre choix'" in found.reason
    assert "the site's description \"L'actualité des quais" in found.reason
    record = extract_page(CONSENT_DIALOGS["en-dialog"], NEWS, **EXTRACTION)
    assert record.interstitial.startswith("consent_wall: IAB TCF stub '__tcfapi'; consent manager's words "
                                          "'We value your privacy'")
    assert record.title == "Coast News"     # what the wall stated is kept


ARTICLE = " ".join(["The council voted on Tuesday to rebuild the harbour wall before the winter storms."] * 30)
EN_CARD = card("We value your privacy", "We and our partners use cookies to personalise ads.", ("Accept", "Options"))


@pytest.mark.parametrize("markup", [
    # an article with the same stub and banner, stating its own title and description
    page("<title>Harbour wall to be rebuilt | Coast News</title>" + TCF_STUB
         + og(site_name="Coast News", title="Harbour wall to be rebuilt by spring",
              description="The council voted on Tuesday to rebuild the harbour wall."),
         f"<article><h1>Harbour wall to be rebuilt</h1><p>{ARTICLE}</p></article>{EN_CARD}"),
    # ... and with none: its words are the page
    page("<title>Harbour wall to be rebuilt | Coast News</title>" + TCF_STUB,
         f"<article><h1>Harbour wall to be rebuilt</h1><p>{ARTICLE}</p></article>{EN_CARD}"),
    # a short page whose own title the dialog sits on
    page(TCF_STUB + og(site_name="Coast News", title="Harbour wall to be rebuilt by spring"), EN_CARD),
    # a privacy policy saying the dialog's words, at length
    page("<title>Privacy policy | Coast News</title>" + TCF_STUB,
         "<h1>Privacy policy</h1><p>We value your privacy. We and our partners store and/or access information on"
         " a device.</p>" + "<p>This section explains which data we keep, for how long, and why.</p>" * 30),
    page("<title>Datenschutzerklärung – Hafenblatt</title>" + TCF_STUB,
         "<h1>Datenschutzerklärung</h1><p>Ihre Privatsphäre ist uns wichtig. Wir und unsere Partner speichern"
         " Daten.</p>" + "<p>Hier steht, welche Daten wir speichern, wie lange und wozu.</p>" * 30, lang="de"),
    # a short page with a title of its own, showing the card in no dialog: the page says what it is
    page("<title>Harbour webcam</title>" + TCF_STUB,
         '<h1>Harbour webcam</h1><video src="/cam.mp4"></video>' + card(
             "We value your privacy", "We and our partners store and/or access information on a device.",
             ("Agree", "Disagree"), element='<div class="cmp-card">')),
    # a short page with the stub and no dialog's words
    page("<title>Harbour webcam</title>" + TCF_STUB,
         '<h1>Harbour webcam</h1><video src="/cam.mp4"></video><p>Live from the pier.</p>'
         '<footer><a href="/privacy">Privacy settings</a> <a href="/cookies">Cookies</a></footer>'),
    # no consent manager: the dialog's words outside any dialog or form are a note
    page("<title>Cookies: our three favourite recipes</title>",
         "<h1>Cookies</h1><p>Butter, sugar, flour and an oven.</p><p>We value your privacy: we never sell"
         ' your address.</p><form action="/subscribe"><input type="email"><button>Subscribe</button></form>'),
], ids=["article-with-own-metadata", "article-without-metadata", "short-page-with-own-title", "privacy-policy",
        "datenschutz", "card-under-own-title", "stub-without-dialog", "no-consent-manager"])
def test_pages_with_a_consent_manager_that_are_content(markup):
    assert wall(markup, NEWS) is None
    assert extract_page(markup, NEWS, **EXTRACTION).interstitial == ""


# -- the login form page whose description is the site's tagline --------------------------------

def login_form(heading: str, user: str, password: str, button: str) -> str:
    return (f'<form action="/session" method="post"><h1>{heading}</h1>'
            f'<label>{user} <input name="login"></label>'
            f'<label>{password} <input type="password" name="password"></label>'
            f'<button type="submit">{button}</button></form>')


LANGUAGES = ("English (US) Deutsch Français (France) Español Italiano Nederlands Português (Brasil) Svenska Polski"
             " Türkçe 日本語 한국어 Русский Українська Čeština Magyar Română Ελληνικά Suomi Dansk Norsk")
FOOTER = (f"<footer><p>{LANGUAGES}</p><p>About · Help · Press · API · Jobs · Privacy · Terms · Locations ·"
          " Language · Portal Verified · Contact uploading and non-users · Meta AI articles</p></footer>")

LOGIN_PAGES = {
    "en-title-is-name": page(
        "<title>Portal</title>"
        + og(site_name="Portal", description="Connect with friends and the world around you."),
        login_form("Portal", "Phone number, username or email", "Password", "Log in")),
    "en-login-title": page(
        og(title="Log in • Portal", description="Share what you see with the people you love."),
        login_form("Log in", "Email", "Password", "Log in")),
    "de": page(
        "<title>Anmelden | Portal</title>"
        + og(title="Anmelden | Portal", description="Teile Fotos und Videos mit deinen Freunden."),
        login_form("Anmelden", "E-Mail-Adresse", "Passwort", "Anmelden"), lang="de"),
    "fr": page(
        "<title>Connexion</title>" + og(site_name="Portail", description="Le réseau des voisins et des amis."),
        login_form("Connexion", "Adresse e-mail", "Mot de passe", "Se connecter"), lang="fr"),
    "es": page(
        og(title="Iniciar sesión en Portal", description="Comparte momentos con tu gente."),
        login_form("Inicia sesión", "Correo electrónico", "Contraseña", "Entrar"), lang="es"),
    "it-forms-hold-few-words": page(
        "<title>Accedi</title>"
        + '<meta name="twitter:description" content="Le notizie dei tuoi amici, ogni giorno.">',
        login_form("Accedi", "Email", "Password", "Accedi") + FOOTER, lang="it"),
    "nl": page(
        og(title="Inloggen bij Portal")
        + '<meta name="twitter:description" content="Blijf in contact met vrienden en familie.">',
        login_form("Inloggen", "E-mailadres", "Wachtwoord", "Inloggen"), lang="nl"),
    "sv": page(
        og(title="Logga in på Portal", description="Dela ögonblick med dina vänner."),
        login_form("Logga in", "E-post", "Lösenord", "Logga in"), lang="sv"),
    "pl": page(
        "<title>Zaloguj się • Portal</title>" + og(description="Dziel się chwilami z bliskimi."),
        login_form("Zaloguj się", "Adres e-mail", "Hasło", "Zaloguj"), lang="pl"),
    "ja": page(
        "<title>ログイン | Portal</title>" + og(description="友達や家族とつながろう。"),
        login_form("ログイン", "メールアドレス", "パスワード", "ログイン"), lang="ja"),
    "en-login-title-no-description": page(
        "<title>Log in • Portal</title>", login_form("Log in", "Email", "Password", "Log in") + FOOTER),
}


@pytest.mark.parametrize("parser", ["selectolax", "html5lib"])
@pytest.mark.parametrize("name", list(LOGIN_PAGES))
def test_a_login_form_page_under_the_sites_title_is_a_login_wall(name, parser):
    found = wall(LOGIN_PAGES[name], SOCIAL, parser)
    assert found is not None and found.kind == "login_wall", found
    assert found.reason.startswith("a password field")


def test_the_login_walls_reason_names_its_title_and_the_sites_tagline():
    found = wall(LOGIN_PAGES["it-forms-hold-few-words"], SOCIAL)
    assert found.reason.startswith("a password field; title 'Accedi'; the site's description ")
    assert "the site's description 'Le notizie dei tuoi amici, ogni giorno.'" in found.reason
    record = extract_page(LOGIN_PAGES["en-title-is-name"], SOCIAL, **EXTRACTION)
    assert record.interstitial.startswith("login_wall: a password field; forms hold ")
    assert "the site's description 'Connect with friends and the world around you.'" in record.interstitial


SIDEBAR_LOGIN = login_form("Members", "Email", "Password", "Log in")


@pytest.mark.parametrize("markup, url", [
    # an article with a login box in its sidebar, stating its own title
    (page("<title>Harbour wall to be rebuilt | Coast News</title>"
          + og(site_name="Coast News", title="Harbour wall to be rebuilt by spring",
               description="Every story from the harbour."),
          f"<article><h1>Harbour wall</h1><p>{ARTICLE}</p></article><aside>{SIDEBAR_LOGIN}</aside>"), NEWS),
    # ... and with no metadata at all: its words are the page
    (page("<title>Harbour wall to be rebuilt | Coast News</title>",
          f"<article><h1>Harbour wall</h1><p>{ARTICLE}</p></article><aside>{SIDEBAR_LOGIN}</aside>"), NEWS),
    # a short form page whose title is its own: its description is its own too
    (page("<title>Photo contest: send us your harbour</title>"
          + og(description="Send your best picture of the harbour before Friday."),
          login_form("Photo contest", "Email", "Password", "Send")), NEWS),
    # a login title, with an og:title of its own
    (page("<title>Log in • Coast News</title>" + og(title="Log in to read: Harbour wall to be rebuilt"),
          login_form("Log in", "Email", "Password", "Log in")), NEWS),
    # a login title without a password field: a page about signing up
    (page("<title>Anmeldung | Stadtlauf</title>" + og(description="Die Anmeldung zum Stadtlauf ist offen."),
          "<h1>Anmeldung</h1><p>Die Anmeldung zum Stadtlauf 2026 ist bis Ende März offen.</p>", lang="de"),
     "https://stadtlauf.test/anmeldung"),
    # the site's home page: its name and tagline, a login box in the header, and its own words
    (page("<title>Portal</title>" + og(site_name="Portal", description="Connect with friends and the world."),
          f"<header>{SIDEBAR_LOGIN}</header><main><p>{ARTICLE}</p></main>"), "https://www.portal.test/"),
    # a short page under the site's name whose few forms are not the page: the name is no login title
    (page("<title>Portal</title>" + og(description="Connect with friends and the world."),
          f"<header>{SIDEBAR_LOGIN}</header>" + FOOTER), SOCIAL),
], ids=["article-sidebar-login", "article-sidebar-login-no-metadata", "own-title", "own-og-title",
        "no-password-field", "home-page", "site-name-is-no-login-title"])
def test_pages_with_a_login_form_that_are_content(markup, url):
    assert wall(markup, url) is None
    assert extract_page(markup, url, **EXTRACTION).interstitial == ""


# -- the words of a wall's title ----------------------------------------------------------------

@pytest.mark.parametrize("title", [
    "Log in", "Sign in or sign up", "Anmelden", "Einloggen und weiter", "Connexion à", "Se connecter",
    "Iniciar sesión en", "Entrar", "Accedi a", "Inloggen bij", "Logga in på", "Log ind", "Zaloguj się do",
    "Kirjaudu sisään", "Giriş yap", "Войти", "ログイン", "Cookies and privacy", "Datenschutzeinstellungen", "",
    "Welcome back", "Please log in", "Mein Konto", "Accedi al tuo account",
])
def test_a_walls_own_title_is_only_title_words(title):
    assert only_words(title)


@pytest.mark.parametrize("title", [
    "Harbour wall to be rebuilt", "Der Hafen wird umgebaut", "Le port de Marseille", "Log in to read the story",
    "Anmeldung zum Stadtlauf", "Cookie recipes",
    # short titles that are runs of title words' letters ("a", "i", "de", "to", "do", "mi", "ai" in "Aide")
    "AI", "Idea", "Ideal", "Todo", "Aide", "Dia", "Mia", "Toi", "Idea – Notely",
])
def test_a_pages_own_title_is_not(title):
    assert not only_words(title)


def test_splitting_a_title_into_words_does_not_backtrack():
    # the titles a backtracking pattern takes exponential time on: a split reads each once
    # (bench/extract times the rules; no test times them)
    for text in ("login" * 24 + "x", "a" * 119 + "x", "ee" * 60 + "q", "loginto" * 17 + "z"):
        assert not only_words(text)


# -- near-misses: a privacy note, a title that is the site's name, a short title -----------------

TCF = "<script>window.__tcfapi=function(){};</script>"
CMP_CARD = card("We value your privacy", "We and our partners store and/or access information on a device.",
                ("Accept", "Options"), element="<div>")
NOTE = "<form><input name=n><textarea></textarea><button>Send</button><small>We respect your privacy.</small></form>"
COAST, ABOUT = "https://www.coastnews.test/a", "Coast News is an independent newsroom covering the coast."
NEAR_MISSES = {   # the page's own form, heading or title: never a wall (HEAD said '' of each)
    "contact-form-note": (page("<title>Contact us | Coast News</title>" + TCF, f"<h1>Contact us</h1>{NOTE}"), COAST),
    "form-with-a-field-is-no-card": (page("<title>Contact us | Coast News</title>" + TCF, NOTE), COAST),
    "newsletter-cookieconsent": (page('<title>Subscribe to the Letter</title><script src="/cookieconsent.js"></script>',
                                      '<h1>The Letter</h1><form><input type=email><button>Subscribe</button>'
                                      "<p>Your privacy is important to us.</p></form>"), COAST),
    "article-dialog-own-h1": (page("<title>Harbour wall collapses | Coast News</title>" + TCF_STUB,
                                   "<h1>Harbour wall collapses</h1><p>Teaser.</p>" + card(
                                       "We value your privacy", "We and our partners process personal data.",
                                       ("Accept", "Options"))), COAST),
    "product-titled-shop": (page("<title>Shop</title>" + og(description="A solid blue widget, ships in 2 days."),
                                 "<header><form>Email<input name=u> Password<input type=password name=p>"
                                 "<button>Log in</button></form></header><h1>Blue Widget 3000</h1><p>€19.99</p>"),
                            "https://shop.test/p/blue-widget"),
    "about-titled-site": (page("<title>Coast News</title>" + TCF + og(site_name="Coast News", description=ABOUT),
                               f"<h1>About us</h1><p>{ABOUT} Your privacy matters to us.</p>"), COAST),
    "privacy-page": (page("<title>Privacy | Coast News</title>" + TCF + og(description="How we handle your data."),
                          "<h1>Privacy</h1><p>We value your privacy. Here is what we collect, and why.</p>"), COAST),
    "privacy-page-no-description": (page("<title>Privacy | Coast News</title>" + TCF,
                                         "<h1>Privacy</h1><p>We value your privacy.</p>"), COAST),
    "privacy-settings": (page("<title>Privacy settings – Coast News</title>" + TCF
                              + og(title="Coast News", description="Manage how we and our partners use data."),
                              "<h1>Privacy settings</h1><p>We and our partners use data.</p>"), COAST),
    "welcome-post": (page("<title>Welcome | Ana's Blog</title>" + TCF + og(site_name="Ana's Blog", title="Welcome",
                          description="My first post."), "<h1>Welcome</h1><p>We value your privacy.</p>"),
                     "https://anasblog.test/2024/01/welcome/"),
    "topic-ai": (page("<title>AI | Coast News</title>" + TCF + TCF_IFRAME + og(title="AI", description="The latest."),
                      '<div class="cmp"><p>We value your privacy</p><button>OK</button></div>'), COAST),
    "login-titled-idea": (page("<title>Idea – Notely</title>" + og(description="Capture an idea in one click."),
                               "<form><input name=u><input type=password><button>Go</button></form><p>Idea</p>"),
                          "https://www.notely.test/idea"),
    "recipe-cookies": (page("<title>Cookies | Bake Blog</title>" + og(title="Cookies", description="Soft cookies."),
                            "<h1>Cookies</h1><p>Soft, chewy.</p><form><p>Rate these cookies</p><input name=r>"
                            "<button>Send</button></form>"), "https://bakeblog.test/2024/cookies"),
}


@pytest.mark.parametrize("name", list(NEAR_MISSES))
def test_a_pages_own_form_heading_or_short_title_is_no_wall(name):
    markup, url = NEAR_MISSES[name]
    assert wall(markup, url) is None
    assert extract_page(markup, url, **EXTRACTION).interstitial == ""


def test_a_consent_managers_words_are_read_in_a_bounded_prefix():
    assert privacy_words("x" * 100 + " We value your privacy", 200) == "We value your privacy"
    assert privacy_words("x" * 100 + " We value your privacy", 100) == ""
    assert privacy_words("xwe value your privacy", 100) == ""          # at the start of a word only
    in_dialog = (lambda n: page("<title>Le Phare</title>" + TCF, f'<div role="dialog">{"x" * n} {CMP_CARD}</div>'))
    assert wall(in_dialog(CARD_CHARS - 400), NEWS).kind == "consent_wall"
    assert wall(in_dialog(CARD_CHARS), NEWS) is None                   # past CARD_CHARS, in one long "word"


def test_a_page_of_few_words_but_many_characters_is_no_card():
    assert wall(page("<title>Portal</title>" + TCF, CMP_CARD), SOCIAL).kind == "consent_wall"
    for filler in ("y" * FEW_CHARS, "あ" * FEW_CHARS, "y" * 60_000):     # one long word; a script without spaces
        assert wall(page("<title>Portal</title>" + TCF, f"{CMP_CARD}<p>{filler}</p>"), SOCIAL) is None
