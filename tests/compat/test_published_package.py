"""A published package that ships a CRFsuite model and calls python-crfsuite
at run time — usaddress (US address parser: ``usaddr.crfsuite`` and
``pycrfsuite.Tagger``) — run with ``skcrf.compat.pycrfsuite`` standing in
for python-crfsuite, exactly as a user would switch: the module replaced in
``sys.modules`` before the package is imported. Its parses must equal the
ones it makes with python-crfsuite itself, on its own model file."""

import importlib
import random
import sys

import pytest

usaddress = pytest.importorskip("usaddress", reason="usaddress is part of the [test] extra")

STREETS = ["Main", "Broadway", "Oak", "Lake Shore", "Martin Luther King Jr", "5th",
           "Pennsylvania", "El Camino Real", "County Road 12", "Highway 61"]
SUFFIXES = ["St", "St.", "Street", "Ave", "Avenue", "Blvd", "Rd", "Dr.", "Way", "Pkwy", ""]
UNITS = ["", "Apt 4B", "Suite 100", "# 12", "Unit 7", "Fl 3", "Room 201"]
PLACES = [("Chicago", "IL", "60601"), ("New York", "NY", "10036"), ("Austin", "TX", "78701"),
          ("Kenai", "AK", "99611"), ("Washington", "DC", "20500"), ("San Jose", "CA", "95112")]


def _addresses(n, seed=0):
    rnd = random.Random(seed)
    out = ["1775 Broadway And 57th, Newyork NY", "PO Box 1234, Springfield MO 65801",
           "corner of 5th and Main", "RR 2 Box 152, Smalltown KS", ""]
    for _ in range(n):
        number = str(rnd.randint(1, 99999))
        street = " ".join(filter(None, [rnd.choice(["", "N", "South", "W."]),
                                        rnd.choice(STREETS), rnd.choice(SUFFIXES)]))
        city, state, zipcode = rnd.choice(PLACES)
        parts = [f"{number} {street}", rnd.choice(UNITS), f"{city}, {state} {zipcode}"]
        sep = rnd.choice([", ", " "])
        out.append(sep.join(p for p in parts if p))
    return out


def _run(module, addresses):
    parsed, tagged = [], []
    for a in addresses:
        parsed.append(module.parse(a))
        try:
            tagged.append(module.tag(a))
        except module.RepeatedLabelError as exc:     # the package's own error
            tagged.append(("repeated", exc.parsed_string))
    return parsed, tagged


def test_usaddress_parses_and_tags_as_with_python_crfsuite(monkeypatch):
    import pycrfsuite

    import skcrf.compat.pycrfsuite as ours

    addresses = _addresses(400)
    real = importlib.reload(usaddress)
    assert type(real.TAGGER) is pycrfsuite.Tagger
    expected = _run(real, addresses)
    monkeypatch.setitem(sys.modules, "pycrfsuite", ours)
    try:
        standing_in = importlib.reload(usaddress)
        assert type(standing_in.TAGGER) is ours.Tagger
        assert _run(standing_in, addresses) == expected
    finally:
        monkeypatch.undo()
        importlib.reload(usaddress)
