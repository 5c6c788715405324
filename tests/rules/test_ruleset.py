from importlib import resources
from pathlib import Path

import pytest
import yaml

from mafialab.rules import (
    ARENA12,
    BUILTIN,
    BUILTIN_VERSIONS,
    MAFIASCOPE7,
    WEREWOLF7,
    RuleSetError,
    load_rules,
    rules_from_dict,
)


def test_builtin_role_counts():
    assert {r.name: r.count for r in MAFIASCOPE7.roles} == {"Mafia": 2, "Doctor": 1, "Villager": 4}
    assert {r.name: r.count for r in WEREWOLF7.roles} == {"Werewolf": 2, "Seer": 1, "Doctor": 1, "Villager": 3}
    assert {r.name: r.count for r in ARENA12.roles} == {"Mafia": 3, "Angel": 1, "Sheriff": 1, "Town": 7}
    assert [r.n_seats for r in (MAFIASCOPE7, WEREWOLF7, ARENA12)] == [7, 7, 12]


def test_builtin_flags_follow_the_protocols():
    assert MAFIASCOPE7.intro_day and MAFIASCOPE7.reveal_role_on_death and MAFIASCOPE7.night.announce_save
    assert MAFIASCOPE7.day.vote == "public_sequential" and MAFIASCOPE7.day.tie == "no_elimination"
    assert MAFIASCOPE7.night.kill_tie == "first_named"
    assert not WEREWOLF7.intro_day and not WEREWOLF7.reveal_role_on_death and not WEREWOLF7.night.announce_save
    assert WEREWOLF7.day.vote == "secret_simultaneous" and WEREWOLF7.day.speaking_order == "seeded"
    assert ARENA12.day.discussion_rounds == 3 and ARENA12.day.vote == "nomination_runoff"
    assert not ARENA12.night.protect_self_consecutive and ARENA12.night.investigate_result == "role"
    assert all(r.round_cap == 15 for r in BUILTIN.values())
    assert WEREWOLF7.lexicon.team_name("mafia") == "Werewolves"


def test_versioned_ids_resolve():
    assert load_rules("werewolf7-v1") is WEREWOLF7
    assert MAFIASCOPE7.id == "mafiascope7-v1"


def test_yaml_roundtrip(tmp_path: Path):
    import yaml

    p = tmp_path / "r.yaml"
    p.write_text(yaml.safe_dump(ARENA12.model_dump(mode="json")))
    assert load_rules(p) == ARENA12


def test_yaml_extends_overrides_nested(tmp_path: Path):
    p = tmp_path / "r.yaml"
    p.write_text("extends: werewolf7\nname: ww-reveal\nreveal_role_on_death: true\nnight: {announce_save: true}\n")
    r = load_rules(p)
    assert r.name == "ww-reveal" and r.reveal_role_on_death and r.night.announce_save
    assert r.night.kill_tie == "seeded" and r.roles == WEREWOLF7.roles


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("extends: werewolf7\nday: {vote: shouting}\n", "day.vote"),
        (
            "extends: werewolf7\nroles: [{name: Wolf, count: 4, team: mafia, ability: kill}, {name: V, count: 3, team: town}]\n",
            "roles",
        ),
        ("extends: werewolf7\nround_cap: 0\n", "round_cap"),
        ("name: x\nroles: [{name: V, count: 3, team: town}]\n", "roles"),
        (
            "extends: werewolf7\nroles: [{name: W, count: 0, team: mafia, ability: kill}, {name: V, count: 3, team: town}]\n",
            "roles[0].count",
        ),
        ("extends: nosuch\n", "extends"),
        ("extends: werewolf7\nbogus_field: 1\n", "bogus_field"),
    ],
)
def test_invalid_yaml_names_the_field(tmp_path: Path, text: str, field: str):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(RuleSetError) as exc:
        load_rules(p)
    assert field in str(exc.value)


def test_malformed_yaml_and_unknown_name(tmp_path: Path):
    p = tmp_path / "broken.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(RuleSetError, match=r"broken.yaml: line \d+: not valid YAML"):
        load_rules(p)
    with pytest.raises(RuleSetError, match="unknown rule set 'chess'"):
        load_rules("chess")
    with pytest.raises(RuleSetError, match="top level"):
        rules_from_dict([1, 2])


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_rules_value_is_named_as_empty_not_as_the_current_folder(value):
    # `--rules ''` used to say ". is a folder, not a file"
    with pytest.raises(RuleSetError, match=r"^rules: no rule set given \(an empty value; built in: mafiascope7"):
        load_rules(value)


def test_rules_file_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_bytes(b"\xff\xfe name: x\n")
    with pytest.raises(RuleSetError, match=r"bad\.yaml.*UTF-8"):
        load_rules(p)


def test_changed_builtin_must_not_keep_the_builtin_id(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    p.write_text("extends: werewolf7\nround_cap: 2\n")
    with pytest.raises(RuleSetError, match=r"name: 'werewolf7' version 1 .*werewolf7-v1"):
        load_rules(p)
    p.write_text("extends: werewolf7\nname: ww-short\nround_cap: 2\n")
    r = load_rules(p)
    assert (r.id, r.round_cap) == ("ww-short-v1", 2)
    # an unchanged copy (what `rules show` prints) and cosmetic seat names stay the built-in
    p.write_text(yaml.safe_dump(WEREWOLF7.model_dump(mode="json"), sort_keys=False))
    assert load_rules(p) == WEREWOLF7
    names = ["P" + str(i) for i in range(WEREWOLF7.n_seats)]
    p.write_text("extends: werewolf7\nseat_names: [" + ", ".join(names) + "]\n")
    assert load_rules(p).id == WEREWOLF7.id


def test_extends_takes_a_versioned_id_and_rejects_non_names(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    p.write_text("extends: werewolf7-v1\nname: wwx\nround_cap: 3\n")
    r = load_rules(p)
    assert (r.id, r.round_cap, r.roles) == ("wwx-v1", 3, WEREWOLF7.roles)
    p.write_text("extends: [1]\n")  # unhashable: used to raise TypeError
    with pytest.raises(RuleSetError, match="extends"):
        load_rules(p)


def test_builtin_rule_sets_are_package_yaml_loaded_like_a_users() -> None:
    shipped = resources.files("mafialab.rules").joinpath("builtin")
    files = sorted(p.name for p in shipped.iterdir() if p.name.endswith(".yaml"))
    # the default version of each rule set as <name>.yaml, other versions as <id>.yaml
    expected = {f"{n}.yaml": r for n, r in BUILTIN.items()}
    expected |= {f"{r.id}.yaml": r for r in BUILTIN_VERSIONS.values() if BUILTIN[r.name] is not r}
    assert files == sorted(expected)
    for fname, builtin in expected.items():
        with resources.as_file(shipped.joinpath(fname)) as path:
            assert load_rules(path) == builtin
    # a copied and edited shipped file is a user's rule set: it must take its own name
    text = shipped.joinpath("werewolf7.yaml").read_text(encoding="utf-8")
    assert "  discussion_rounds: 1\n" in text
    with pytest.raises(RuleSetError, match="name: 'werewolf7' version 1 is the id of the built-in"):
        rules_from_dict(yaml.safe_load(text.replace("  discussion_rounds: 1\n", "  discussion_rounds: 2\n")))


@pytest.mark.parametrize(
    ("names", "want"),
    [
        (["", "Bailey"], r"seat_names\.0: '' is not a name"),
        ([" ", "Bailey"], r"seat_names\.0: ' ' is not a name"),
        (["Bailey", " Casey"], r"seat_names\.1: ' Casey' is not a name"),
        (["6", "Bailey"], r"seat_names\.0: '6' is not a name"),
        (["Alex", "alex"], r"seat_names: names must be unique \(ignoring case"),
    ],
)
def test_seat_names_must_be_names(names, want):
    # a blank or numeric name played, and "--night 5=4" then meant a seat number silently
    base = WEREWOLF7.model_dump()
    base["seat_names"] = [*names, *base["seat_names"][len(names) :]]
    with pytest.raises(ValueError, match=want):
        rules_from_dict({**base, "name": "seatnames"})


def test_only_the_benchmark_version_calls_itself_the_benchmark_setting():
    # werewolf7-v1 names every voter in a secret vote's result; the benchmark setting is v2
    # (``rules list`` called both "Belief-shift benchmark setting")
    calls = {rid for rid, r in BUILTIN_VERSIONS.items() if r.description.startswith("Belief-shift benchmark setting")}
    assert calls == {"werewolf7-v2"}
    v1 = BUILTIN_VERSIONS["werewolf7-v1"].description
    assert "werewolf7-v2" in v1 and v1.startswith("Werewolf table")
