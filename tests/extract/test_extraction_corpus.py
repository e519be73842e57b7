"""The metascraper corpus (../shared/corpus/metascraper): agreement with its expected fields,
and the two HTML parsers giving the same metadata on real pages."""
import importlib.util
import json

from spiderduck.extract import extract_cases, extract_page
from support.extraction import EXTRACTION, ROBOTS_TOKEN

# The bar (metascraper itself agrees on 95.1%); reached: 432/453 = 95.4% (with the
# canonical-URL change then in progress, which lost wnycstudios' url: 433/453 at the commit before).
MIN_AGREEMENT = 0.953
# Fields matched per field as last measured, for the text fields, publisher, author and date, so
# that a gain in one field cannot hide a loss in another. The misses left are the reference
# extractor's quirks (see tests/extract/test_extraction_quality.py for our own corpus), but for
# therams' publisher, named only by its logo's alt text, which the parsed Document does not keep.
FIELD_FLOOR = {"title": 60, "description": 57, "lang": 54, "publisher": 54, "author": 47, "date": 48}


def as_metascraper_dates(got: dict[str, dict]) -> dict[str, dict]:
    """metascraper's `date` is the newest date a page states: its last modification where it
    gives one. Our record states the two apart (issue 29: published_time is the first
    publication, what a preview shows), so its `date` is compared with modified_time, else
    published_time."""
    return {name: {**record, "published_time": record.get("modified_time") or record.get("published_time")}
            if record.get("modified_time") else record for name, record in got.items()}


def _scorer(shared_path):
    path = shared_path("tools", "score_metadata.py")
    spec = importlib.util.spec_from_file_location("score_metadata", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def agreement(cases: list[dict], got: dict[str, dict], score, fields=None) -> tuple[int, int]:
    hit = total = 0
    for field in fields or score.DEFAULT:
        for case in cases:
            expected = case["expected"].get(field)
            if expected is None:
                continue
            total += 1
            hit += score.norm(field, expected) == score.norm(field, score.field_of(got.get(case["name"]), field))
    return hit, total


def test_agreement_with_the_corpus(shared_path):
    cases_path = shared_path("corpus", "metascraper", "cases.json")
    cases = json.loads(cases_path.read_text())
    got = as_metascraper_dates(extract_cases(str(cases_path), **EXTRACTION))
    assert set(got) == {c["name"] for c in cases}
    score = _scorer(shared_path)
    hit, total = agreement(cases, got, score)
    assert hit / total >= MIN_AGREEMENT, f"agreement {hit}/{total} = {hit / total:.1%}"
    per_field = {field: agreement(cases, got, score, (field,))[0] for field in FIELD_FLOOR}
    low = {field: f"{per_field[field]} < {floor}" for field, floor in FIELD_FLOOR.items() if per_field[field] < floor}
    assert not low, f"fields below their floor: {low}"


def test_both_parsers_give_the_same_metadata_on_the_corpus(shared_path):
    cases_path = shared_path("corpus", "metascraper", "cases.json")
    for case in json.loads(cases_path.read_text()):
        body = (cases_path.parent / case["html"]).read_bytes()
        fast = extract_page(body, case["url"], parser="selectolax", robots_token=ROBOTS_TOKEN)
        reference = extract_page(body, case["url"], parser="html5lib", robots_token=ROBOTS_TOKEN)
        assert fast == reference, case["name"]
