"""The rules annotator on the grey zone of the suspect/accuse definitions (docs/beliefshift.md,
"Annotation"): pronouns, motives, hedged frames, conditions, quotes, lists then clearing, and
whose view a cue is. Every sentence is our own, written for the rule it checks."""

from __future__ import annotations

import pytest

from mafialab.beliefshift import RulesAnnotator, load_annotator_pack
from mafialab.beliefshift._annotate import GameContext
from mafialab.beliefshift._pack import _OPTIONAL_CUE_KEYS

CTX = GameContext(names=("Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley"), game="Mafia", town_team="Town",
                  mafia_team="Mafia")  # fmt: skip

CASES = [
    # a directed cue spreads over a coordinated object, a hyphenated group and a pronoun
    (
        "I'm keeping an eye on Bailey for the late vote, and on the Casey-Dana pair for coordination.",
        {"Bailey": "suspect", "Casey": "suspect", "Dana": "suspect"},
    ),
    ("Ellis went quiet and Finley pushed hard. I say we keep an eye on both of them.", {"Ellis": "suspect", "Finley": "suspect"}),
    ("Dana has dodged every question. I'm watching her closely.", {"Dana": "suspect"}),
    # "you" is both others only when two others are alive (see the two-player case below)
    ("I'm watching both of you closely.", {}),
    # an identity statement with a pronoun for the player named before it
    ("Casey has steered every vote. I'm confident she's the last Mafia.", {"Casey": "accuse"}),
    ("Bailey flipped twice. I think he is Mafia, maybe.", {"Bailey": "suspect"}),
    # the speaker's own "I think" / "I say" is the speaker's view, not reported speech
    ("I think Casey is the Mafia.", {"Casey": "accuse"}),
    ("I say Finley is one of the Mafia.", {"Finley": "accuse"}),
    ("Dana says Finley is one of the Mafia.", {}),
    # an aim attributed to a player ("to earn trust", "to look innocent") is a hidden motive
    ("Dana's vote was bold, but could easily be Mafia trying to earn trust.", {"Dana": "suspect"}),
    ("Ellis voted with the crowd to look innocent, which is a convenient move.", {"Ellis": "suspect"}),
    ("Bailey went silent after the vote, maybe a way to avoid answering questions.", {"Bailey": "suspect"}),
    # "if I had to pick" is not a condition on the player
    ("I keep going back and forth, but if I had to pick, Ellis's pattern makes me nervous.", {"Ellis": "suspect"}),
    # "for a Mafia player" measures a claim, it does not place the player
    ("Finley's claim is very bold for a Mafia player.", {}),
    # quoted words are someone else's: they neither clear nor suspect
    ('Ellis came in with a "trust me" attitude, which could be a cover.', {"Ellis": "suspect"}),
    ('Casey\'s "the Mafia waited" theory was wrong, and that is all.', {}),
    # a candidate list, then one of its players cleared explicitly
    ("The Mafia is either Bailey or Casey. Casey looks like an honest villager to me.", {"Bailey": "suspect"}),
    ("The Mafia is either Bailey or Casey.", {"Bailey": "suspect", "Casey": "suspect"}),
    # a possibility raised in the indicative, against a counterfactual answered by a defence
    ("If Dana is Mafia, she has been steering us all game.", {"Dana": "suspect"}),
    ("If Dana were Mafia, why would she vote against her own partner?", {}),
    ("What if Bailey and Casey are working together?", {"Bailey": "suspect", "Casey": "suspect"}),
    ("We need to seriously consider that Bailey is the Mafia.", {"Bailey": "suspect"}),
    # even-handed alternatives, also under "whether"
    ("I'm watching everyone now, especially whether Finley's defence was genuine or Mafia teamwork.", {"Finley": "suspect"}),
    ("Ellis flipped his vote late, which could be a partner cutting ties, or genuine.", {"Ellis": "suspect"}),
    # a cue about the speaker is not about the player named before it
    ("I hear what Bailey is saying, and I understand why I look suspicious.", {}),
    ("I hear Bailey's point; I've been measured and careful, which can seem calculated.", {}),
    # unknown is not suspicious; suspicion that a player draws is the others' view
    ("Casey and Ellis are too quiet to judge.", {}),
    ("Dana has drawn a lot of suspicion today.", {}),
    ("Finley's been too consistently helpful to be Mafia.", {}),
    # "that's a Mafia pair ..." said of the players of the sentence before accuses them
    ("Bailey and Casey never voted against each other. That's a Mafia pair protecting each other.", {"Bailey": "accuse", "Casey": "accuse"}),
    # a directed cue at a described group, then its names
    ("I'm more suspicious of the players who skipped the intro—Dana, Ellis and Finley.", {"Dana": "suspect", "Ellis": "suspect", "Finley": "suspect"}),
    ("We should focus on those who stayed silent, like Casey and Ellis.", {"Casey": "suspect", "Ellis": "suspect"}),
    ("I'm zeroing in on Dana now.", {"Dana": "suspect"}),
    # the object of a player's action is not the subject of the suspicion
    ("Casey keeps steering suspicion toward Dana and me.", {"Casey": "suspect"}),
    ("Finley's quickness to back Ellis and then vote Dana stands out as odd.", {"Finley": "suspect"}),
    (
        "Finley has been consistent but safe. That could be a cautious villager, but it could also be a Mafia coasting while Bailey does the talking.",
        {"Finley": "suspect"},
    ),
]  # fmt: skip


# the definitions' decision rules, one sentence of ours each
DEFINITION_CASES = [
    # accuse: an unhedged identity statement, certainty, a pair, a check stated as fact
    ("Bailey's play was careful. That's not a cautious villager, that's a Mafia player.", {"Bailey": "accuse"}),
    ("Bailey and Casey are the pair.", {"Bailey": "accuse", "Casey": "accuse"}),
    ("Dana is the only possible Mafia left.", {"Dana": "accuse"}),
    ("I checked Ellis last night: Mafia.", {"Ellis": "accuse"}),
    ("I believe Casey is one of them.", {"Casey": "accuse"}),
    ("Bailey is definitely Mafia.", {"Bailey": "accuse"}),
    # a negated identity statement is not one
    ("Casey is not Mafia.", {}),
    ("Dana isn't Mafia.", {}),
    ("Ellis is definitely not one of them.", {}),
    # suspect: hedged wording, however strong
    ("I'm leaning heavily toward Ellis.", {"Ellis": "suspect"}),
    ("Dana is my strongest suspect.", {"Dana": "suspect"}),
    ("I'm starting to think Casey is Mafia.", {"Casey": "suspect"}),
    ("Ellis voting like that is a classic Mafia move.", {"Ellis": "suspect"}),
    ("Bailey feels like Mafia to me.", {"Bailey": "suspect"}),
    ("Voting Casey is our safest bet today.", {"Casey": "suspect"}),
    ("I'm watching Finley like a hawk.", {"Finley": "suspect"}),
    ("Bailey might be the one we're looking for.", {"Bailey": "suspect"}),
    ("Something about Finley feels off.", {"Finley": "suspect"}),
    ("Dana and Finley are working together, I'm sure of it.", {"Dana": "suspect", "Finley": "suspect"}),
    # a bare vote is no label, a reason with a cue is
    ("My vote goes to Casey; she has been deflecting all day.", {"Casey": "suspect"}),
    # unknown, general vigilance, disagreement with logic, self-defence, agreement: no label
    ("Dana is hard to read.", {}),
    ("Ellis is a question mark for me.", {}),
    ("I'm watching everyone today.", {}),
    ("I disagree with Bailey's logic on the night kill.", {}),
    ("I'm not Mafia, and Casey knows it.", {}),
    ("I agree with Ellis completely.", {}),
    # ulterior motives: the one with the motive, not its object
    ("Dana is framing Ellis.", {"Dana": "suspect"}),
    # agreeing with someone that a player is suspicious suspects the player, not the one agreed with
    ("I agree with Bailey that Casey's quick vote feels like a convenient move.", {"Casey": "suspect"}),
    ("I'm anxious about Ellis after that disconnect.", {"Ellis": "suspect"}),
    ("Dana and Finley were quiet in the intros; they might have been lying low.", {"Dana": "suspect", "Finley": "suspect"}),
    ("Between the two, Casey's pattern looks worse to me.", {"Casey": "suspect"}),
    # "a partner cutting ties" is an identity statement
    ("Ellis defended Dana, then turned on her late. That's a partner cutting ties.", {"Ellis": "accuse"}),
    ("Bailey pushed hard early—could be honest scumhunting, could be a Mafia trying to look decisive.", {"Bailey": "suspect"}),
    # a clause opening with a pronoun or "that" after a clause naming one player (as an object) is about that player
    ("That leaves Dana—that nervous energy felt like someone trying to muddy the waters.", {"Dana": "suspect"}),
    ("Dana laid low after that first move.", {"Dana": "suspect"}),
    ("Finley was quick to pile on, which feels a bit eager.", {"Finley": "suspect"}),
    ("Casey skipping the vote is also worth questioning.", {"Casey": "suspect"}),
    # "without" negates a clearing word after it
    ("Ellis's quick vote without much independent reasoning stands out as odd.", {"Ellis": "suspect"}),
    # "I like to think" is the speaker; "Bailey and Casey think" is reported speech
    (
        "I like to think things through, so here's what stands out: Bailey went quiet after the vote, which is fair, but it's also a good way to stay under the radar.",
        {"Bailey": "suspect"},
    ),
    ("Bailey and Casey think Dana is the Mafia.", {}),
    # "from" names whose the thing is, not the object of an action
    ("The failed intros from Bailey and Dana are suspicious.", {"Bailey": "suspect", "Dana": "suspect"}),
    # the hidden team as the object of a hunt
    ("Finley and Bailey have been consistently hunting Mafia.", {}),
    # a clause of the speaker's own ends the topic: the next pronoun clause is not about the players before
    (
        "Dana and Ellis are both making good points, but I'm wary of people who jump on that logic—it can be a way to steer suspicion.",
        {},
    ),
    # "that" opening a sentence points at its subject, not at a player named as an object
    (
        "Ellis doubted the claim before Bailey's save was confirmed. That doubt was reasonable then, but now it feels like a convenient shift.",
        {"Ellis": "suspect"},
    ),
    # agreeing with a player is no label; agreeing that another player is suspicious is
    ("Bailey's making a good point about the connection errors being suspicious timing.", {}),
    ("Bailey makes a good point that Casey's vote was suspicious.", {"Casey": "suspect"}),
    # a pronoun after a clause that named one player (as an object) stands for that player
    (
        "Bailey has been quiet. Right now, I'm most suspicious of Dana—their fight with Ellis could've been a setup to look innocent after Ellis's exit.",
        {"Dana": "suspect"},
    ),
    # an enumeration is no suspicion
    ("Looking at the remaining players: Bailey, Casey and Dana have voted together.", {}),
]  # fmt: skip


# kinds of fault fresh held-out samples showed (packs v4 and v5; fixed in annotator-en-v5 and -v6),
# one sentence of ours each
HELD_OUT_FAULT_CASES = [
    # a possessive name before a claim noun is the claim's author, not the subject of a cue in it
    ("Dana's theory about loud players being a cover has me thinking.", {}),
    # a player the hidden team acts on or sees as a threat is not suspected by that
    ("Bailey being saved twice is very telling.", {}),
    ("Either the Doctor guessed well, or the Mafia is fixated on taking out Ellis.", {}),
    ("Either way, the Mafia clearly sees Dana as the biggest threat.", {}),
    ("It's interesting that the Mafia went after Finley.", {}),
    # "makes me wonder if X ..." is about X, not about the players named before it
    ("That, combined with the Mafia going after quiet Ellis, makes me wonder if Casey saw Ellis as a threat.", {"Casey": "suspect"}),
    # the speaker placed on the hidden team (a leaked thought) is a self-reference
    ("Ellis's claim checks out. That leaves me in a bad spot as the last Mafia.", {}),
    # a cue withdrawn or dismissed as unfounded in the same sentence
    ("Bailey and Dana both lagged during the vote, which is odd but not necessarily suspicious.", {}),
    ("Finley, I get it, but singling me out for talking a lot is a weak reason to be suspicious.", {}),
    ("Dana's calm could be a cover for a Mafia player, but I know that's not the case.", {}),
    # a relative clause is about the last subject before it, not every subject of the clause before
    ("However, Casey voted with clear reasoning, and Dana skipped the vote entirely—which is suspicious in itself.", {"Dana": "suspect"}),
    # a pronoun-led clause keeps its player; names after a subordinator or as objects are not the subject
    ("Ellis worries me a bit: they're loud, which is fine, but they dodged the question instead of answering Finley's point.", {"Ellis": "suspect"}),
    (
        "Dana, you're already pointing fingers at Casey and me for asking questions—that's a convenient way to deflect attention, especially since you were the one who first brought up Bailey's vote.",
        {"Dana": "suspect"},
    ),
    # a read in a player's favour is not a lean against them
    ("I'm leaning town on Casey now.", {}),
    # a directed cue spreads over a parallel object with its own reason
    ("I'm most suspicious of Bailey for dodging the question and going after me, and Dana for the late vote.", {"Bailey": "suspect", "Dana": "suspect"}),
    # a clearing trait re-read as a possible cover is suspect
    ("Finley has been steady and reasonable all game, which could be good cover.", {"Finley": "suspect"}),
    # a sentence without a subject continues the player of the sentence before
    ("Casey, you keep pointing at the quiet people. Could be a smart Mafia play to look busy.", {"Casey": "suspect"}),
    # "no-" in a compound is no negation; ", while" opens a clause with its own subject
    ("Finley's no-vote is a red flag.", {"Finley": "suspect"}),
    ("Bailey's long speech felt like overcompensation, while Dana has been deflecting all game.", {"Dana": "suspect"}),
    # candidates named as the possibilities; a defensive reaction; a call for scrutiny; eyes open on a player
    ("That leaves Bailey, Casey and Dana as the possibilities.", {"Bailey": "suspect", "Casey": "suspect", "Dana": "suspect"}),
    ("Ellis answered the question in a very defensive way.", {"Ellis": "suspect"}),
    ("Finley needs more scrutiny today.", {"Finley": "suspect"}),
    ("I'm keeping my eyes open on Bailey today.", {"Bailey": "suspect"}),
    # (v6) a clearing word on one side of an alternative does not clear
    ("Dana dislikes fast moves—that could be genuine, or it could be someone trying to stay under the radar.", {"Dana": "suspect"}),
    ("Dana is talking a big game, which could be helpful or a clever cover.", {"Dana": "suspect"}),
    ("Casey was targeted, which might mean she's innocent, but it could also be a setup.", {"Casey": "suspect"}),
    ("Dana plays it smart, but careful could mean calculating.", {"Dana": "suspect"}),
    # (v6) a directed cue at a player's thing, or at a described group then its examples
    ("I'm a bit wary about the connection errors for Casey and Dana.", {"Casey": "suspect", "Dana": "suspect"}),
    ("I'm keeping a close eye on the quiet ones, like Bailey and Finley.", {"Bailey": "suspect", "Finley": "suspect"}),
    # (v6) candidate lists that name the speaker too; the only other candidate is an accusation
    ("Now the Mafia is among the four of us: me, Bailey, Casey, and Dana.", {"Bailey": "suspect", "Casey": "suspect", "Dana": "suspect"}),
    ("That leaves Bailey, Casey, and myself as suspects.", {"Bailey": "suspect", "Casey": "suspect"}),
    ("Casey is the only other option.", {"Casey": "accuse"}),
    # (v6) defences: a harmless explanation, certainty against, "at least", the lesser reading, "for Mafia"
    ("Bailey's connection errors are weird timing, but that's just tech.", {}),
    ("Dana was targeted three times; there's zero chance she's Mafia.", {}),
    ("Finley pushes hard too, but at least he's trying to be methodical about it.", {}),
    ("Ellis is eager, but that feels more like personality than a cover.", {}),
    ("Bailey's accusation was bold, which is risky for Mafia.", {}),
]  # fmt: skip


# kinds of fault pooled over the development set and held-out samples 3-5 (fixed in
# annotator-en-v7), one sentence of ours each: unease without a cue word, a pronoun for a player
# named sentences before, group pronouns, the hidden team placed between the two others addressed,
# a suspicion withdrawn
V7_FAULT_CASES = [
    # degree words before a cue; a quality in excess, of any kind; not a time word or an unknown
    ("I want to hear from Dana before we vote—her silence this morning feels a bit off.", {"Dana": "suspect"}),
    ("Casey backing every single vote feels a little too tidy.", {"Casey": "suspect"}),
    ("Bailey's answers were a bit too measured for the first day.", {"Bailey": "suspect"}),
    ("It's a bit too early to tell who is lying, so let's talk more.", {}),
    ("Ellis said the same thing too, and I agree with that.", {}),
    # unease in other words: troubling, gives me pause, raised a flag, curious about, a loud silence
    ("Finley's silence is troubling.", {"Finley": "suspect"}),
    ("Dana's quiet vote gives me pause.", {"Dana": "suspect"}),
    ("Bailey's answer raised a red flag for me.", {"Bailey": "suspect"}),
    ("I'm curious about Ellis's sudden change of heart.", {"Ellis": "suspect"}),
    ("Casey hasn't said a word all day; that silence is loud.", {"Casey": "suspect"}),
    # opportunism: an easy target picked, an easy way to blame
    ("Casey going after the quiet ones feels like an easy way to point fingers.", {"Casey": "suspect"}),
    ("Dana picked an easy target and ran with it.", {"Dana": "suspect"}),
    # a modal identity statement, also through a pronoun for the player named sentences before
    ("Bailey could be the Mafia we're missing.", {"Bailey": "suspect"}),
    ("Finley voted late again. I went back over the votes. Honestly, he could be the Mafia we're missing.", {"Finley": "suspect"}),
    ("Dana voted for Bailey, and she could be the Mafia we're missing.", {}),
    # group pronouns: both, one of them
    ("Ellis voted with the crowd, and Finley stayed quiet the whole day. Both could be Mafia.", {"Ellis": "suspect", "Finley": "suspect"}),
    ("Casey and Dana keep agreeing. If one of them is Mafia, the other is covering.", {"Casey": "suspect", "Dana": "suspect"}),
    ("Casey keeps agreeing. Both could be Mafia.", {}),
    # a pronoun after the speaker's own clause stands for the players that clause named
    ("Dana's vote looks fine to me, but I want to hear from Bailey and Ellis—they've barely said a word, which is suspicious.", {"Bailey": "suspect", "Ellis": "suspect"}),
    ("Dana's vote looks fine to me. Still, I want to hear from Bailey and Ellis. They've barely said a word, which is suspicious.", {"Bailey": "suspect", "Ellis": "suspect"}),
    # a suspicion withdrawn in the same sentence, or doubted right after it
    ("Finley's vote was suspicious at first, but he explained it well, so I'm dropping it.", {}),
    ("Casey's comment about Ellis feels interesting, but I'm not sure if that's really suspicious.", {}),
    # a clearing word in excess, or as a yardstick, does not clear
    ("Casey and Dana both going after Bailey felt a bit too clean.", {"Casey": "suspect", "Dana": "suspect"}),
    ("Finley's vote came late and felt too innocent by half.", {"Finley": "suspect"}),
    ("Casey pushing that hard is a little too aggressive for an innocent.", {"Casey": "suspect"}),
    ("Finley has been too consistently helpful to be Mafia.", {}),
    # tense and wording variants of known cues; coincidence or pattern; "if anything" is no condition
    ("I don't have much to go on yet, but Dana's errors stood out to me.", {"Dana": "suspect"}),
    ("Bailey has been pushing every vote, which cuts both ways.", {"Bailey": "suspect"}),
    ("Ellis jumping on the quietest player feels like low-hanging fruit.", {"Ellis": "suspect"}),
    ("I'm more interested in why Finley went silent after the vote.", {"Finley": "suspect"}),
    ("Bailey dropped out again, which could be coincidence or a pattern.", {"Bailey": "suspect"}),
    ("If anything, the quiet ones like Dana and Finley could easily be laying low.", {"Dana": "suspect", "Finley": "suspect"}),
    # the examples of a group are its subject; a directed cue at a group, then its examples after a dash
    ("Ellis and Finley talk a lot, while others like Bailey and Casey haven't said a word—silence can be a red flag.", {"Bailey": "suspect", "Casey": "suspect"}),
    ("Maybe someone like Bailey—awfully quiet all day—could be hiding something.", {"Bailey": "suspect"}),
    ("I'm zeroing in on anyone who's been quiet so far—like Dana and Ellis.", {"Dana": "suspect", "Ellis": "suspect"}),
    # players named by a verb of naming are its objects; a parallel object needs both "for"s
    ("I'm suspicious of how quick Dana was to name-drop Casey and Bailey, almost like she's trying to steer us.", {"Dana": "suspect"}),
    ("I'm a bit wary of how quickly Ellis jumped into accusing Casey and Dana for being calm.", {"Ellis": "suspect"}),
    ("That's an interesting point, Dana, and I'll think about it.", {}),
]  # fmt: skip


def _alex_labels(text: str) -> dict[str, str]:
    """The rules annotator's labels for ``text`` said by Alex, as {target name: category}."""
    cands = {n: i for i, n in enumerate(CTX.names) if n != "Alex"}
    return {CTX.names[x.target]: x.category for x in RulesAnnotator().label_text(text, "Alex", cands, CTX)}


@pytest.mark.parametrize(("text", "gold"), V7_FAULT_CASES)
def test_v7_fault_kinds_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


@pytest.mark.parametrize(
    "text",
    [
        "I know I'm not Mafia, so the last Mafia is one of you two.",
        "The final Mafia is sitting between you two.",
        "One of you is Mafia, and I need to hear from both of you.",
    ],
)
def test_the_hidden_team_between_the_two_others_addressed(text):
    two = RulesAnnotator().label_text(text, "Alex", {"Bailey": 1, "Casey": 2}, CTX)
    assert {CTX.names[x.target]: x.category for x in two} == {"Bailey": "suspect", "Casey": "suspect"}
    # with three others alive, "you two" is ambiguous: never a guess
    three = RulesAnnotator().label_text(text, "Alex", {"Bailey": 1, "Casey": 2, "Dana": 3}, CTX)
    assert three == []


@pytest.mark.parametrize(("text", "gold"), HELD_OUT_FAULT_CASES)
def test_held_out_fault_kinds_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


@pytest.mark.parametrize(("text", "gold"), DEFINITION_CASES)
def test_definition_examples_get_their_label(text, gold):
    assert _alex_labels(text) == gold


@pytest.mark.parametrize(("text", "gold"), CASES)
def test_grey_zone_sentences_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


def test_you_means_both_others_when_only_two_are_alive():
    cands = {"Bailey": 1, "Casey": 2}
    labs = RulesAnnotator().label_text("One of you is lying. I'm watching both of you closely.", "Alex", cands, CTX)
    assert {CTX.names[x.target]: x.category for x in labs} == {"Bailey": "suspect", "Casey": "suspect"}


def test_a_pack_without_the_v3_cue_keys_still_loads(tmp_path):
    from importlib import resources

    import yaml

    raw = yaml.safe_load(resources.files("mafialab.beliefshift").joinpath("annotator_en.yaml").read_text())
    assert set(_OPTIONAL_CUE_KEYS) <= set(raw["cues"])  # the built-in pack has them all
    for k in _OPTIONAL_CUE_KEYS:
        raw["cues"].pop(k)
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(raw))
    pack = load_annotator_pack(path)
    assert pack.cues["possibility"] == ()
    cands = {"Bailey": 1, "Casey": 2}
    labs = RulesAnnotator(pack=pack).label_text("Casey is the Mafia.", "Alex", cands, CTX)
    assert [(x.target, x.category) for x in labs] == [(2, "accuse")]


def test_a_malformed_optional_cue_key_is_named(tmp_path):
    from importlib import resources

    import yaml

    raw = yaml.safe_load(resources.files("mafialab.beliefshift").joinpath("annotator_en.yaml").read_text())
    raw["cues"]["possibility"] = ["if ("]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ValueError, match=r"cues\.possibility"):
        load_annotator_pack(path)


def test_model_annotator_prompt_states_the_grey_zone_rules():
    from mafialab.beliefshift import ModelAnnotator
    from mafialab.beliefshift._annotate import DayMessage
    from mafialab.models import MockModel

    msg = DayMessage("g", 2, 1, 10, 0, "Bailey could be Mafia.", (1, 2))
    system = ModelAnnotator(MockModel([])).request(msg, CTX).messages[0].content
    # a defence, a cleared candidate, quoted words and others' suspicion are no label; an
    # indicative condition and an even-handed alternative are suspect; a confession repeated is accuse
    for phrase in (
        "if X were Mafia, why would they",
        "a candidate the speaker then clears",
        "words the speaker quotes",
        "suspicion that others have of X",
        "if X is Mafia, she has been steering us",
        "X could be genuine or Mafia",
        "a confession repeated as fact",
    ):
        assert phrase in system, phrase


# whose suspicion a cue is: players named in a suspicious sentence but not its subject
NAMED_NOT_SUSPECTED = [
    # a cue inside another player's cited claim is that player's, not the speaker's
    ("Casey called out the coordination between Dana and Ellis, then moved on to Finley.", {}),
    ("Bailey went after me again. They keep painting me as shady for asking questions.", {}),
    # ... unless the speaker's own judgement follows it
    ("Dana's rush to call me suspicious feels far too eager.", {"Dana": "suspect"}),
    # a suspicion raised and argued away in the same sentence gets no label
    ("Ellis's sudden shift is suspicious, but if Ellis were Mafia, they would have stayed quiet.", {}),
    (
        "Finley has been steady all game. Their late claim is convenient, but they never pushed a vote on me, "
        "which would be easy for a Mafia player to do.",
        {},
    ),
    # a reported thought: the player it is about, not the one whose news prompted it
    ("Now Bailey's save makes me think Dana is even more suspicious.", {"Dana": "suspect"}),
    # the player a directed cue names is who "that" stands for in the next sentence
    (
        "Casey has kept quiet too. I'm most suspicious of Finley, who has barely spoken since the vote. "
        "That silence could be strategic hiding.",
        {"Finley": "suspect"},
    ),
    # voting against the Mafia places no one on it
    ("Bailey, Casey and I all voted against both Mafia members.", {}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), NAMED_NOT_SUSPECTED)
def test_players_named_but_not_suspected_get_no_label(text, gold):
    assert _alex_labels(text) == gold


def test_a_dead_players_flip_is_no_cue_for_the_living():
    cands = {n: i for i, n in enumerate(CTX.names) if n not in ("Alex", "Ellis")}  # Ellis was voted out
    text = "Dana has been right all game—they voted Ellis and he flipped Mafia."
    assert RulesAnnotator().label_text(text, "Alex", cands, CTX) == []


# kinds of fault pooled over the development set and samples 3-7 (fixed in annotator-en-v8),
# one sentence of ours each: a list or cue in the main clause after a condition, behaviour that
# is itself the suspicion (no cue word), the speaker's own innocence clearing no one, a group
# pronoun for the players of the two sentences before, the victim of a kill attempt and the
# player someone else turned to suspecting
V8_FAULT_CASES = [
    # the main clause after a condition is the speaker's own possibility; the condition is not
    ("Bailey and Casey look calm—if Dana is innocent, that means two Mafia could be among Bailey, Casey and Ellis.", {"Bailey": "suspect", "Casey": "suspect", "Ellis": "suspect"}),
    ("If Dana is really town, then the Mafia is between Bailey and Casey.", {"Bailey": "suspect", "Casey": "suspect"}),
    ("If the vote was a mistake, then Finley is looking very suspicious.", {"Finley": "suspect"}),
    ("If Dana were Mafia, why would she vote for her own partner?", {}),
    ("If Bailey is innocent, then Casey is clearly innocent too.", {}),
    # behaviour described without a cue word
    ("Casey kept to safe votes all game.", {"Casey": "suspect"}),
    ("Dana only follows others and never leads.", {"Dana": "suspect"}),
    ("Finley went quiet after the vote.", {"Finley": "suspect"}),
    ("Bailey and Ellis have both given long speeches but haven't taken real risks.", {"Bailey": "suspect", "Ellis": "suspect"}),
    ("Bailey has been floating in the middle, voting with the majority each time.", {"Bailey": "suspect"}),
    ("Finley echoed my point without adding anything new.", {"Finley": "suspect"}),
    ("Dana has never once taken a stand.", {"Dana": "suspect"}),
    ("Ellis seemed calm, almost like they were being careful not to draw attention.", {"Ellis": "suspect"}),
    ("Casey voted with the majority, like most of us did, and she explained why.", {}),
    ("Dana took a real risk by calling out Bailey early.", {}),
    ("I went quiet yesterday because of the errors.", {}),
    ("Finley went quiet because his connection dropped.", {}),
    # the speaker's own innocence clears none of the players named after it
    ("I know I'm innocent, so the Mafia is among Bailey, Dana and Casey.", {"Bailey": "suspect", "Casey": "suspect", "Dana": "suspect"}),
    # a group pronoun for the players of the two sentences before (exactly two)
    ("Dana voted for Ellis and has been loud. Casey followed the vote but stayed quiet. Both could be Mafia.", {"Casey": "suspect", "Dana": "suspect"}),
    ("Dana voted for Ellis and has been loud. Casey followed the vote but stayed quiet. One of them is probably Mafia.", {"Casey": "suspect", "Dana": "suspect"}),
    # the victim of a kill attempt, and the player someone else turned to suspecting
    ("Finley getting targeted is a big red flag—the Mafia saw them as a threat.", {}),
    ("Right now, Bailey's quick shift to suspect Casey feels like an attempt to lead the charge.", {"Bailey": "suspect"}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), V8_FAULT_CASES)
def test_v8_fault_kinds_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


# kinds of false label pooled over the development set and samples 3-8 (fixed in annotator-en-v9),
# one sentence of ours each: a player paired with the speaker ("X and me") is the speaker's
# company or someone else's target, suspicion stirred up or doubt cast on a player by someone
# else, a player's own uncertainty, and a town player's aim; the counter-cases keep their labels
V9_FAULT_CASES = [
    ("Casey and I are still here after that fight, which might mean the Mafia wants us to keep arguing while they hide.", {}),
    ("It's too early to pin suspicion on Dana and me just because we're quiet.", {}),
    ("Ellis spent the morning pointing at quiet players like Finley and me, which feels like a way to dodge attention.", {"Ellis": "suspect"}),
    ("Finley and I pushed the same vote, so one of us could be Mafia.", {"Finley": "suspect"}),
    ("Now it's down to Casey, Dana and me, and the Mafia is one of Casey, Dana or me.", {"Casey": "suspect", "Dana": "suspect"}),
    ("Bailey and I voted together, but Bailey keeps deflecting every question.", {"Bailey": "suspect"}),
    ("Dana is now uncertain and keeps second-guessing herself.", {}),
    ("The killers want to stir up suspicion on Casey and Ellis for backing me.", {}),
    ("Bailey went silent, then cast doubt on Dana and Finley out of nowhere—that's a classic lurker move.", {"Bailey": "suspect"}),
    ("I need to cast doubt on Ellis today.", {"Ellis": "suspect"}),
    ("Dana's been loud, but that could be town trying to lead.", {}),
    ("Dana could be trying to lead us astray.", {"Dana": "suspect"}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), V9_FAULT_CASES)
def test_v9_fault_kinds_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


# clearing read as suspicion (fixed in annotator-en-v10), sentences of ours; the counter-cases
# keep their labels: a lean toward a player that is no lean toward innocence, a clearing of
# one player beside a suspicion of another
V10_CLEARING_CASES = [
    ("Dana's answer clears her from any suspicion in my eyes.", {}),
    ("That alibi clears Casey of suspicion for me.", {}),
    ("I'm leaning toward Ellis being innocent after that vote.", {}),
    ("Honestly I lean towards Finley as town now.", {}),
    ("I'm leaning toward Ellis being the last Mafia.", {"Ellis": "suspect"}),
    ("I'm leaning towards Bailey after that vote.", {"Bailey": "suspect"}),
    ("Dana's answer clears her, but Casey dodged the question twice, which feels off.", {"Casey": "suspect"}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), V10_CLEARING_CASES)
def test_v10_clearing_is_not_suspicion(text, gold):
    assert _alex_labels(text) == gold


# the kinds of fault seen on sample 9 (fixed in annotator-en-v11), sentences of ours, each with
# a counter-case that keeps its label
V11_FAULT_CASES = [
    # the players left once others are cleared, the speaker among them: a candidate list
    ("Casey is cleared by the save, so that leaves me, Dana and Finley.", {"Dana": "suspect", "Finley": "suspect"}),
    ("With the save on Casey, that leaves Bailey, Dana and me.", {"Bailey": "suspect", "Dana": "suspect"}),
    ("That leaves Dana with a lot of explaining to do.", {}),
    # a pseudo-cleft with the player last, an ellipsis before the name
    ("What bothers me most is... Dana.", {"Dana": "suspect"}),
    ("What worries me most is Casey's silence.", {"Casey": "suspect"}),
    # an ellipsis is a pause, not a sentence end: the condition still holds
    ("If... Dana is Mafia, why would she vote against her own partner?", {}),
    # a name that modifies a noun ("a Finley vote") is the vote's target, not the subject
    ("Dana kept pushing for a Finley vote, which feels calculated.", {"Dana": "suspect"}),
    ("Bailey jumped on the Ellis bandwagon too quickly.", {"Bailey": "suspect"}),
    # another player's own suspicion is not the speaker's
    ("Casey has been suspicious of Dana since day one.", {}),
    ("She's wary of Finley after the vote.", {}),
    ("I've been suspicious of Dana since day one.", {"Dana": "suspect"}),
    # a directed cue at "the two who ...", then the names after a colon
    ("I'm most suspicious of the two who voted together yesterday: Dana and Ellis.", {"Dana": "suspect", "Ellis": "suspect"}),
    # "their reactions" stands for the players named earlier in the clause
    ("Casey and Dana both voted for me, so I'm keeping an eye on their reactions.", {"Casey": "suspect", "Dana": "suspect"}),
    ("I'm keeping an eye on their reactions.", {}),
    # nobody has given a reason to suspect: clearing phrased around the cue word
    ("Finley has been steady, and nobody has given us any reason to suspect her.", {}),
    # a fault a player owns up to, a vote given as suspicious, a cue inside someone's theory
    ("Dana admitted voting too quickly yesterday.", {}),
    ("Dana voted too quickly yesterday.", {"Dana": "suspect"}),
    ("Ellis named Casey as suspicious yesterday.", {}),
    ("Dana, your theory about quiet players being suspicious is a stretch.", {}),
    # the victims of someone's manipulation, and suspicion a player drives at another
    ("I'm worried that Casey was misled by that speech.", {}),
    ("I'm worried about Casey.", {"Casey": "suspect"}),
    ("Bailey has driven suspicion toward the quiet players all game.", {}),
    # "after X did": a time reference, so the relative clause is about the subject
    ("Casey piled on Dana right after Ellis did, which could be a coordinated Mafia move.", {"Casey": "suspect"}),
    # the hidden team placed among "you" and the names after it
    ("If Finley is innocent, then the Mafia is among you, Bailey and Casey.", {"Bailey": "suspect", "Casey": "suspect"}),
    # a sentence led by the hidden team ends the topic of the sentences before
    ("Dana and Ellis were calm all day. The Mafia killed Finley overnight. That feels strategic.", {}),
    # "innocents" clears like "innocent"
    ("Casey's been jumpy all day, but that's just how nervous innocents act.", {}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), V11_FAULT_CASES)
def test_v11_fault_kinds_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


# the kinds of fault seen on sample 10 (fixed in annotator-en-v12), sentences of ours, each with
# a counter-case that keeps its label
V12_FAULT_CASES = [
    # a group that a verb acts on ("to frame someone like X"): its examples are objects too
    ("Pinning it on Casey feels like a ploy to frame someone like Dana or Ellis.", {}),
    ("They keep trying to blame people like Finley for every bad vote.", {}),
    ("Players like Dana and Ellis haven't said a word all day, which is suspicious.", {"Dana": "suspect", "Ellis": "suspect"}),
    # a stated bet on a player is an accusation, hedged a suspicion, negated nothing
    ("My money's on Finley.", {"Finley": "accuse"}),
    ("My money is still on Dana being the ringleader.", {"Dana": "accuse"}),
    ("If I had to bet, my money's probably on Ellis.", {"Ellis": "suspect"}),
    ("My money isn't on Casey anymore.", {}),
    # wondering whether a player deceives the group, or whether the pair just named are the team
    ("I'm starting to wonder if Bailey is playing us.", {"Bailey": "suspect"}),
    ("I wonder if Bailey is playing it safe because she's new.", {}),
    ("Casey and Dana keep backing each other, and I wonder if they're both Mafia.", {"Casey": "suspect", "Dana": "suspect"}),
    ("Casey and Dana keep backing each other, and I wonder if they're both new to the game.", {}),
    # a second verb of a third-person subject: that player's own suspicion, not the speaker's
    ("Dana voted for Ellis and seems honestly suspicious of him.", {}),
    ("Bailey argued with Casey and is still wary of Finley.", {}),
    ("Dana voted for Ellis, and I'm suspicious of Ellis.", {"Ellis": "suspect"}),
    # a name modifying a noun after an adjective ("that early X vote"): the vote's target
    ("The wolves probably hid inside that early Finley vote to avoid suspicion.", {}),
    ("That early vote from Finley felt like a way to avoid suspicion.", {"Finley": "suspect"}),
    # a participle used as a preposition has no subject of its own
    ("I won't swear Dana is innocent, but compared to Bailey's strategic scheming?", {}),
    ("Dana kept quiet, but then dodged my question, which is suspicious.", {"Dana": "suspect"}),
    # players watched because they sided with the speaker are allies, not suspects
    ("I'll keep an eye on how Casey and Dana respond, since they voted with me yesterday.", {}),
    ("I'm watching Ellis because she sided with me, and I hope that holds.", {}),
    ("I'll keep an eye on Casey and Dana, since they voted against me yesterday.", {"Casey": "suspect", "Dana": "suspect"}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), V12_FAULT_CASES)
def test_v12_fault_kinds_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


# the kinds of fault seen on sample 11 (fixed in annotator-en-v13), sentences of ours, each with
# a counter-case that keeps the earlier reading
V13_FAULT_CASES = [
    # a lookbehind is a whole word: "redirecting suspicion" is deflection, "directing" is not
    ("Ellis keeps redirecting suspicion whenever the talk turns to her.", {"Ellis": "suspect"}),
    ("I side with Bailey that Casey is redirecting suspicion far too smoothly.", {"Casey": "suspect"}),
    ("Dana has been directing suspicion at Finley since the morning.", {}),
    # suspicion a player drives toward the speaker is the speaker's read of that player
    ("Casey keeps driving suspicion toward me without a single reason.", {"Casey": "suspect"}),
    ("Casey has been driving suspicion all day with long speeches.", {}),
    # a name's "'s" before an adjective cue reads "is": that player's own view
    ("Bailey's pointing at Dana, and Ellis's wary of both of them.", {}),
    ("Finley's suspicious of Casey for the late vote.", {}),
    ("Finley's suspicion of Casey makes sense to me.", {"Casey": "suspect"}),
    # the speaker's thoughts returning to a player
    ("I keep coming back to Dana's sudden change of vote.", {"Dana": "suspect"}),
    ("We kept going back to Finley's timeline all night.", {"Finley": "suspect"}),
    ("Bailey keeps coming back to the same old point about quiet players.", {}),
    # the speaker's judgement of a player's claim after it is about that player; a cue or a
    # clearing word inside the claim stays the claim's own
    ("Casey's theory about loud players feels far too convenient.", {"Casey": "suspect"}),
    ("Ellis's read that Dana is innocent sounds too convenient to me.", {"Ellis": "suspect"}),
    ("Casey's theory that quiet players are suspicious is weak.", {}),
    ("Ellis's point about the vote is solid, so let's look at who stayed quiet.", {}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), V13_FAULT_CASES)
def test_v13_fault_kinds_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold


# the contracted copula in identity statements (annotator-en-v14), sentences of ours: "he's",
# "she's", "they're" and a name's "'s" where no possessive can stand accuse like "is"; the
# hidden team's own thing places no one on it; the counter-cases keep the earlier reading
V14_CONTRACTION_CASES = [
    ("Finley dodged every question. He's definitely Mafia.", {"Finley": "accuse"}),
    ("Dana dodged the vote. She's one of the Mafia.", {"Dana": "accuse"}),
    ("Ellis spoke last again. They're Mafia.", {"Ellis": "accuse"}),
    ("Bailey's clearly one of the Mafia.", {"Bailey": "accuse"}),
    ("Casey's a Mafia player, no question.", {"Casey": "accuse"}),
    ("Bailey's Mafia.", {"Bailey": "accuse"}),
    ("Bailey is the Mafia's next target.", {}),
    ("Dana is one of the Mafia's targets, so protect her.", {}),
    # a possessive before the team word is the player's thing, not an identity statement
    ("Bailey's Mafia theory is weak.", {}),
    ("Casey's Mafia read on Ellis makes no sense.", {}),
    # negation, condition and hedge keep their readings
    ("Casey's not Mafia.", {}),
    ("Ellis went quiet. If she's Mafia, she hides well.", {"Ellis": "suspect"}),
    ("Dana stalled. She's probably Mafia.", {"Dana": "suspect"}),
    ("Bailey is Mafia.", {"Bailey": "accuse"}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "gold"), V14_CONTRACTION_CASES)
def test_v14_contracted_identity_statements_get_the_defined_label(text, gold):
    assert _alex_labels(text) == gold
