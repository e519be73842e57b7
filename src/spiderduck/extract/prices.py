"""A product page's offer (`Offer`: price, currency, availability), from its JSON-LD Product's
offers, else its OpenGraph product metas (`product:price:amount`, `product:price:currency`,
`product:availability`)."""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from spiderduck.core.record import Offer
from spiderduck.extract import values
from spiderduck.extract.jsonld import node_types
from spiderduck.extract.sources import Sources

MAX_OFFERS = 16              # offers of a Product looked at for one with a price
MAX_LD_NODES = 64            # JSON-LD nodes looked at for a Product
MAX_PRICE = Decimal(10) ** 12

PRODUCT_TYPES = frozenset({"Product", "ProductGroup", "IndividualProduct", "ProductModel", "SomeProducts",
                           "Vehicle", "Car", "Book", "SoftwareApplication", "MobileApplication",
                           "WebApplication", "VideoGame"})

# schema.org's ItemAvailability names (and OpenGraph's, Facebook catalogues'), by their letters
# lower-cased: the record's snake case.
AVAILABILITY = {
    "instock": "in_stock", "outofstock": "out_of_stock", "oos": "out_of_stock", "soldout": "sold_out",
    "preorder": "pre_order", "presale": "pre_sale", "backorder": "back_order",
    "availablefororder": "back_order", "discontinued": "discontinued",
    "limitedavailability": "limited_availability", "onlineonly": "online_only",
    "instoreonly": "in_store_only", "madetoorder": "made_to_order", "reserved": "reserved",
    "available": "in_stock", "pending": "pre_order",
}

_CURRENCY = re.compile(r"[A-Z]{3}$")


def offer_from(s: Sources) -> tuple[Offer | None, str]:
    """The page's offer and where it was read (`json-ld:offers`, `product:price:amount`,
    `product:availability`), or (None, ''). One with neither a price nor an availability is none."""
    if s.graph:
        for node in s.graph.nodes[:MAX_LD_NODES]:
            if node_types(node) & PRODUCT_TYPES and "offers" in node:
                found = _ld_offer(s, node["offers"])
                if found:
                    return found, "json-ld:offers"
    price = price_text(s.doc.meta("product:price:amount") or s.doc.meta("og:price:amount"))
    availability = availability_of(s.doc.meta("product:availability") or s.doc.meta("og:availability"))
    if not (price or availability):
        return None, ""
    currency = currency_of(s.doc.meta("product:price:currency") or s.doc.meta("og:price:currency")) if price else ""
    return Offer(price, currency, availability), "product:price:amount" if price else "product:availability"


def _ld_offer(s: Sources, offers: Any) -> Offer | None:
    """The first offer (an Offer, or an AggregateOffer's lowPrice) with a price, else the first
    with an availability."""
    fallback = None
    for offer in (offers if isinstance(offers, list) else [offers])[:MAX_OFFERS]:
        if not isinstance(offer, dict):
            continue
        offer = s.graph.resolve(offer)
        spec = offer.get("priceSpecification")
        spec = spec[0] if isinstance(spec, list) and spec else spec
        spec = spec if isinstance(spec, dict) else {}
        price = price_text(offer.get("price")) or price_text(offer.get("lowPrice")) or price_text(spec.get("price"))
        availability = availability_of(offer.get("availability"))
        if price:
            currency = currency_of(offer.get("priceCurrency")) or currency_of(spec.get("priceCurrency"))
            return Offer(price, currency, availability)
        if availability and fallback is None:
            fallback = Offer("", "", availability)
    return fallback


def price_text(value: Any) -> str:
    """A price as its decimal text: a JSON number (`19.99`, `20` for 20.0), or a text of digits
    with a decimal point (`19.90`), a decimal comma (`19,90`), or thousands grouped (`1,299.00`,
    `1.299,00`); '' for anything else (NaN, 1e400, negative, over MAX_PRICE, a range)."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, bool):
        return ""
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return ""
        text = format(Decimal(repr(value)), "f") if isinstance(value, float) else str(value)[:32]
        text = text[:-2] if text.endswith(".0") else text
        if not _POINT.match(text):          # 1e-300's 300 decimals, as a text's would be refused
            return ""
    elif isinstance(value, str):
        text = _plain_price(values.fold(value)[:32])
    else:
        return ""
    try:
        return text if text and 0 <= Decimal(text) < MAX_PRICE else ""
    except InvalidOperation:
        return ""


_POINT = re.compile(r"[0-9]{1,13}(?:\.[0-9]{1,4})?$")
_COMMA = re.compile(r"[0-9]{1,13},[0-9]{1,2}$")
_US_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]{1,4})?$")
_EU_GROUPED = re.compile(r"[0-9]{1,3}(?:\.[0-9]{3})+(?:,[0-9]{1,4})?$")


def _plain_price(text: str) -> str:
    if _POINT.match(text):
        return text
    if _COMMA.match(text):
        return text.replace(",", ".")
    if _US_GROUPED.match(text):
        return text.replace(",", "")
    if _EU_GROUPED.match(text):
        return text.replace(".", "").replace(",", ".")
    return ""


def currency_of(value: Any) -> str:
    """An ISO 4217 code (`EUR`), or ''."""
    text = values.text(value).upper()
    return text if _CURRENCY.match(text) else ""


def availability_of(value: Any) -> str:
    """schema.org's availability (`https://schema.org/InStock`, `InStock`, `instock`) or OpenGraph's
    (`in stock`, `oos`) in snake case (`in_stock`); '' when not one."""
    text = values.text(value)[:80].rstrip("/")
    key = "".join(c for c in text.rpartition("/")[2].rpartition(":")[2].lower() if c.isalpha())
    return AVAILABILITY.get(key, "")
