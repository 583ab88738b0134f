"""Category table, alias canonicalisation and the single-group rule."""

from __future__ import annotations

import pytest
from rmeval.benchmarks.fairness.arxiv.categories import Membership, check_disjoint, load_table, resolve_group
from rmeval.errors import RmevalError
from workflow_helpers import PAPER_GROUPS

ALIAS_PAIRS = [
    ("cs.SY", "eess.SY"),
    ("math.IT", "cs.IT"),
    ("math.MP", "math-ph"),
    ("q-fin.EC", "econ.GN"),
    ("stat.TH", "math.ST"),
    ("cs.NA", "math.NA"),
]


@pytest.fixture(scope="module")
def table():
    return load_table()


@pytest.fixture(scope="module")
def specs(table):
    return {name: resolve_group(name, entries, table) for name, entries in PAPER_GROUPS.items()}


@pytest.mark.parametrize(("alias", "canonical"), ALIAS_PAIRS)
def test_alias_pairs_map_to_arxiv_canonical_name(table, alias, canonical):
    assert table.canonicalize(alias) == canonical
    assert table.canonicalize(canonical) == canonical
    assert alias in table.names_by_canonical[canonical]


def test_subsumed_archives_and_unknown_names(table):
    assert table.canonicalize("acc-phys") == "physics.acc-ph"
    assert table.canonicalize("cmp-lg") == "cs.CL"
    assert table.canonicalize("astro-ph") == "astro-ph"  # old papers list the bare archive
    assert table.canonicalize("cs.ZZ") == "cs.ZZ"  # a future category of a known archive
    assert table.canonicalize("nonsense.XY") is None
    assert table.archive_group_of["econ"] == "econ"


def test_eess_sy_listed_with_its_alias_stays_in_systems_science(specs):
    # The naive "exactly one category" rule would drop this paper: it is listed under two names.
    membership, categories = specs["systems_science"].classify("eess.SY cs.SY")
    assert membership is Membership.INSIDE
    assert categories == ("eess.SY",)
    assert specs["computer_science"].classify("eess.SY cs.SY")[0] is Membership.OUTSIDE


def test_single_group_rule_over_the_paper_groups(specs):
    physics = specs["physics"]
    assert physics.classify("hep-th gr-qc math-ph")[0] is Membership.INSIDE
    assert physics.classify("math-ph math.MP")[0] is Membership.INSIDE  # math.MP is math-ph
    assert specs["mathematics"].classify("math-ph math.MP")[0] is Membership.OUTSIDE
    assert physics.classify(["quant-ph", "cs.LG"])[0] is Membership.MIXED
    assert specs["computer_science"].classify("cs.IT math.IT")[0] is Membership.INSIDE
    assert specs["mathematics"].classify("math.NA cs.NA")[0] is Membership.INSIDE
    assert specs["economics"].classify("q-fin.EC")[0] is Membership.INSIDE
    assert specs["quantitative_finance"].classify("q-fin.EC q-fin.GN")[0] is Membership.MIXED
    assert specs["computer_science"].classify("cs.LG stat.ML")[0] is Membership.MIXED
    assert specs["electrical_engineering"].classify("eess.SP eess.SY")[0] is Membership.MIXED
    assert physics.classify("")[0] is Membership.NO_CATEGORIES
    assert physics.classify(None)[0] is Membership.NO_CATEGORIES
    assert physics.classify("hep-th bogus-arch")[0] is Membership.UNKNOWN_CATEGORY


def test_query_terms_include_aliases(specs):
    assert specs["systems_science"].query_terms() == ["eess.SY", "cs.SY"]
    cs_terms = specs["computer_science"].query_terms()
    assert (
        "math.IT" in cs_terms and "cmp-lg" in cs_terms and "cs.SY" not in cs_terms and "cs.NA" not in cs_terms
    )
    assert "math.MP" in specs["physics"].query_terms()


def test_paper_groups_are_disjoint(specs):
    check_disjoint(specs)


def test_overlapping_groups_are_an_error(table):
    overlapping = {
        "ee": resolve_group("ee", ["eess"], table),
        "sys": resolve_group("sys", ["eess.SY"], table),
    }
    with pytest.raises(RmevalError, match="eess.SY in ee and sys"):
        check_disjoint(overlapping)


def test_bad_group_entries_name_the_key(table):
    with pytest.raises(RmevalError, match=r"groups\.physics\[1\].*'hep-xx'"):
        resolve_group("physics", ["hep-th", "hep-xx"], table)
    with pytest.raises(RmevalError, match=r"groups\.empty"):
        resolve_group("empty", [], table)
    # A config may name an alias; it resolves to the canonical category.
    assert resolve_group("sys", ["cs.SY"], table).categories == {"eess.SY"}


def test_malformed_table_is_reported(tmp_path):
    bad = tmp_path / "table.tsv"
    bad.write_text("name\tarchive\tarchive_group\tcanonical\tkind\ncs.XX\tcs\tcs\tcs.YY\talias\n")
    with pytest.raises(RmevalError, match="not a category in the table"):
        load_table(bad)
    with pytest.raises(RmevalError, match="not found"):
        load_table(tmp_path / "missing.tsv")
