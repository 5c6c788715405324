"""Write the MafiaScope-format test fixtures in this directory (our own games and text).

Usage: python tests/data/mafiascope/generate.py

The files mimic the layout and record kinds of public MafiaScope recordings
(``<corpus>/<game id>/game.jsonl``, ``introspection.jsonl``, ``state.jsonl``, and
``configs/*.yaml``) so the importer, metrics and viewer tests run without the real data.
Every text is written here; the games are small scripted plays. See README.md for which
trap each game carries. The output is deterministic; review the diff before committing.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPORA = ("en_demo", "ru_clean", "corpus_v2", "game_family_showcase", "traps")

ERROR_RESET = "ERROR: ('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))"
ERROR_POOL = "ERROR: HTTPSConnectionPool(host='api.example.test', port=443): Max retries exceeded (read timeout)"
BACKENDS = {
    "chatgpt": {
        "type": "openai",
        "model": "gpt-4o-mini",
        "max_tokens": 400,
        "timeout": 90,
        "api_url": "https://api.example.test/v1",
        "api_key_set": True,
        "temperature": 0.7,
        "top_p": None,
    }
}

EN = {
    "intro": [
        "Hi all, I'm {me}. I like quiet games and careful votes.",
        "Hello! {me} here. Let's talk a lot and vote with reasons.",
        "Good evening, I'm {me}. I will watch who changes their story.",
    ],
    "accuse": [
        "I suspect {t}. Their account of last night keeps shifting.",
        "{t} is the Mafia, I am sure of it: they pushed the wrong vote twice.",
        "Something is off with {t}; they defend everyone except the dead.",
    ],
    "calm": [
        "Nothing solid yet. I'd rather listen before pointing fingers.",
        "I trust {t} for now; they have been open since the first day.",
        "Let's not rush. Who has a concrete reason?",
    ],
    "vote": "My reasoning is above. VOTE: {t}",
    "vote_bold": "I have heard enough. VOTE: **{t}**",
    "mafia": "We take {t} tonight; they are reading us too well.",
    "doctor": "I will protect {t} tonight.",
    "sheriff": "I want to check {t}.",
}
RU = {
    "intro": [
        "Привет всем, я {me}. Играю спокойно и голосую с доводами.",
        "Добрый вечер, меня зовут {me}. Буду следить за теми, кто меняет версии.",
    ],
    "accuse": [
        "Я подозреваю {t}: вчера он говорил одно, сегодня другое.",
        "{t} точно мафия, он дважды толкал неверное голосование.",
    ],
    "calm": [
        "Пока ничего точного. Давайте послушаем ещё.",
        "Я пока доверяю {t}, он с самого начала говорит открыто.",
    ],
    "vote": "Мои доводы выше. VOTE: {t}",
    "vote_bold": "Я услышал достаточно. VOTE: {t}",
    "mafia": "Сегодня ночью убираем {t}, он слишком хорошо нас читает.",
    "doctor": "Этой ночью я защищаю {t}.",
    "sheriff": "Проверяю {t}.",
}
QUESTIONS_EN = {
    "role_assessment": "You are {me}. Your previous role guesses: {prev}\nFor each living player ({alive}), "
    "yourself included, give the role you believe they hold, a confidence 0-100 and a reason. Reply with JSON only.",
    "suspicion_ranking": "Order the living players ({alive}) from most to least suspicious. Reply with JSON only.",
    "social_map": "You are {me}. Your previous reading of how others see you: {prev}\nHow does each living player "
    "({alive}) regard you now? Reply with JSON only.",
    "personality_profile": "Describe each other living player ({alive}) on the five traits O C E A N (0-100).",
    "planned_action": "You are {me}. What will you do next and toward whom? Reply with JSON only.",
}
QUESTIONS_RU = {
    "role_assessment": "Ты — {me}. Твои прошлые догадки: {prev}\nДля каждого живого игрока ({alive}), включая себя, "
    "назови роль, уверенность 0-100 и причину. Отвечай только JSON.",
    "suspicion_ranking": "Упорядочи живых игроков ({alive}) от самого подозрительного. Отвечай только JSON.",
    "social_map": "Ты — {me}. Раньше ты думал так: {prev}\nКак каждый живой игрок ({alive}) относится к тебе? "
    "Если ты кого-то подозреваешь, он может это чувствовать. Отвечай только JSON.",
    "personality_profile": "Опиши каждого живого игрока ({alive}) по пяти чертам O C E A N (0-100).",
    "planned_action": "Ты — {me}. Что ты сделаешь дальше и в отношении кого? Отвечай только JSON.",
}
STANDARD = ("role_assessment", "suspicion_ranking", "social_map", "personality_profile")


class Game:
    """A scripted MafiaScope game writer: appends records with increasing timestamps."""

    def __init__(self, gid: str, players: list[tuple[str, str]], *, seed: int, lang: str = "en", t0: float = 1.8e9):
        self.gid, self.lang, self.rng = gid, lang, random.Random(seed)
        self.text = RU if lang == "ru" else EN
        self.players = [
            {
                "name": n,
                "role": r,
                "model": "gpt-4o-mini",
                "backend": "chatgpt",
                "personality": {k: self.rng.randrange(20, 90, 5) for k in "OCEAN"},
            }
            for n, r in players
        ]
        self.role = dict(players)
        self.names = [n for n, _ in players]
        self.alive = list(self.names)
        self.records: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []
        self.snaps: list[dict[str, Any]] = []
        self.ts = t0
        self.round = 0
        self.seq = 0
        self.night_result: str | None = None
        self.failures: dict[tuple[int, str, str], str] = {}
        self.actions = False  # end night turns with MafiaScope's "ACTION: ..." line (replayable)
        self.probe_mode: str | None = None  # None, "revised", "legacy", "suspicion_only"
        self.snapshots = False
        self.triggers: set[str] = {"intro_last", "day_vote", "night"}  # and round_end (always)
        self.last: dict[tuple[str, str], Any] = {}

    # ---------------------------------------------------------------- helpers
    def tick(self, dt: float = 6.5) -> float:
        self.ts = round(self.ts + dt + self.rng.random(), 3)
        return self.ts

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        rec = {"game_id": self.gid, "kind": kind, "round": self.round, **fields, "ts": self.tick()}
        self.records.append(rec)
        return rec

    def setup(self, *, round_: int = 0, **extra: Any) -> None:
        self.round = round_
        self.add("setup", players=self.players, **extra)

    def say(self, kind: str, player: str, text: str, phase: str) -> None:
        self.seq += 1
        text = self.failures.get((self.round, kind, player), text)
        self.add(kind, player=player, response=text, msg_seq=self.seq)
        if kind in ("intro", "day_discuss", "day_vote"):
            self.snapshot(phase)
            if kind in self.triggers or (
                kind == "intro" and "intro_last" in self.triggers and player == self.alive[-1]
            ):
                self.probe_all(phase, speaker=player, everyone=kind == "intro")
        elif kind == "night_mafia" and "night" in self.triggers:
            self.probe_one(player, "night", self.seq)

    def snapshot(self, phase: str) -> None:
        if not self.snapshots or len(self.snaps) >= 10:  # the first ten messages are enough
            return
        players = []
        for i, p in enumerate(self.players):
            players.append(
                {
                    "name": p["name"],
                    "idx": i,
                    "role": p["role"],
                    "backend_name": "chatgpt",
                    "model_label": "gpt-4o-mini",
                    "personality": p["personality"],
                    "language": self.lang,
                    "alive": p["name"] in self.alive,
                    "messages": [
                        {"role": "system", "content": f"You are {p['name']}; your secret role is {p['role']}."},
                        {"role": "user", "content": f"Round {self.round}: the table is talking."},
                    ],
                }
            )
        stage = {"intro": "intro", "day_discuss": "day_discuss", "day_vote": "day_vote"}[phase]
        self.snaps.append(
            {
                "game_id": self.gid,
                "round": self.round,
                "msg_seq": self.seq,
                "phase": phase,
                "pending": {"stage": stage, "remaining": []},
                "night_result": self.night_result,
                "sheriff_checks": {},
                "alive": list(self.alive),
                "players": players,
                "ts": self.ts + 0.01,
            }
        )

    # ---------------------------------------------------------------- probes
    def answer(self, pid: str, me: str) -> Any:
        others = [n for n in self.alive if n != me]
        mafia = [n for n in self.names if self.role[n] in ("Mafia", "Spy")]
        if pid == "role_assessment":
            out = []
            for n in self.alive:
                if n == me or self.role[me] == "Mafia":
                    guess, conf = self.role[n], 90
                else:
                    guess = self.rng.choice(["Mafia", "Villager", "Villager", "Unknown", "Doctor", "Possible Mafia"])
                    conf = self.rng.randrange(10, 95, 5)
                out.append({"player": n, "guessed_role": guess, "confidence": conf, "reason": "talk"})
            return out
        if pid == "suspicion_ranking":
            ranked = sorted(others, key=lambda n: (n in mafia and self.rng.random() < 0.6, self.rng.random()))[::-1]
            return [{"player": n, "score": 9 - i} for i, n in enumerate(ranked)]
        if pid == "social_map":
            att = ["trusts", "neutral", "suspects", "neutral", "unknown"]
            return {
                "toward_me": [
                    {
                        "player": n,
                        "attitude": self.rng.choice(att),
                        "confidence": self.rng.randrange(20, 90, 10),
                        "reason": "tone",
                    }
                    for n in others
                ]
            }
        if pid == "personality_profile":
            return [
                {"player": n, **{k: self.rng.randrange(20, 90, 10) for k in "OCEAN"}, "summary": "steady"}
                for n in others
            ]
        return {"action": "vote", "target": self.rng.choice(others) if others else me, "reasoning": "they dodge"}

    def probe_one(self, me: str, phase: str, msg_seq: int, ids: tuple[str, ...] | None = None) -> None:
        if self.probe_mode is None:
            return
        qs = QUESTIONS_RU if self.lang == "ru" else QUESTIONS_EN
        if ids is None:
            ids = ("suspicion_ranking",) if self.probe_mode == "suspicion_only" else STANDARD
        idx = self.names.index(me)
        for pos, pid in enumerate(ids):
            parsed: Any = self.answer(pid, me)
            raw = json.dumps(parsed, ensure_ascii=False, indent=1 if roll_fmt(self.rng) else None)
            ok = True
            roll = self.rng.random()
            if self.probe_mode == "legacy" and pid == "role_assessment" and roll < 0.5:
                raw, parsed, ok = raw[: len(raw) * 2 // 3], None, False  # cut at max_tokens, no ERROR
            elif self.probe_mode == "revised" and roll < 0.06:
                raw, parsed, ok = self.rng.choice([ERROR_RESET, ERROR_POOL]), None, False
            elif roll < 0.15:
                raw = "```json\n" + raw + "\n```"
            elif pid == "suspicion_ranking" and roll < 0.2:
                parsed = {"rankings": parsed}  # a wrapper object the list readers ignore
                raw = json.dumps(parsed)
            prev = self.last.get((me, pid))
            chained = json.dumps(prev[:2] if isinstance(prev, list) else prev, ensure_ascii=False) if prev else "N/A"
            question = qs[pid].format(me=me, alive=", ".join(self.alive), prev=chained)
            rec = {
                "timestamp": self.tick(1.2),
                "game_id": self.gid,
                "round": self.round,
                "public_msg_seq": msg_seq,
                "player_idx": idx,
                "player_name": me,
                "probe_seq": pos,
                "probe_id": pid,
                "question": question,
                "answer_raw": raw,
                "answer_parsed": parsed,
                "answer_parse_ok": ok,
                "model": "gpt-4o-mini",
                "role": self.role[me],
                "phase": phase,
                "latency_ms": self.rng.randrange(800, 4000),
            }
            if self.probe_mode != "legacy":
                rec["chain_used_raw_fallback"] = not ok
            if ok:
                self.last[(me, pid)] = parsed
            self.probes.append(rec)

    def probe_all(self, phase: str, speaker: str | None = None, everyone: bool = False) -> None:
        if self.probe_mode is None:
            return
        msg = -1 if phase == "round_end" else self.seq
        # the speaker (own turn), or everyone living: a subset of MafiaScope's triggers keeps the files small
        for n in self.alive:
            if everyone or phase == "round_end" or n == speaker:
                ids = STANDARD + (("planned_action",) if n == speaker and self.probe_mode == "revised" else ())
                self.probe_one(n, phase, msg, None if self.probe_mode == "suspicion_only" else ids)

    # ---------------------------------------------------------------- phases
    def line(self, key: str, me: str, t: str | None = None) -> str:
        return self.rng.choice(self.text[key]).format(me=me, t=t or me)

    def intro(self) -> None:
        self.round, self.seq = 0, 0
        for n in self.alive:
            self.say("intro", n, self.line("intro", n), "intro")

    def night(self, kill: str | None, protect: str | None = None, check: str | None = None) -> None:
        self.round += 1
        self.seq = 0
        for n in [n for n in self.alive if self.role[n] == "Mafia"]:
            act = f"\n\nACTION: Kill {kill}" if self.actions and kill else ""
            self.say("night_mafia", n, self.text["mafia"].format(t=kill or "nobody") + act, "night")
        doc = next((n for n in self.alive if self.role[n] == "Doctor"), None)
        if doc is not None and protect is not None:
            act = f"\n\nACTION: Protect {protect}" if self.actions else ""
            self.say("night_doctor", doc, self.text["doctor"].format(t=protect) + act, "night")
        sheriff = next((n for n in self.alive if self.role[n] == "Sheriff"), None)
        if sheriff is not None and check is not None:
            act = f"\n\nACTION: Check {check}" if self.actions else ""
            self.say("night_sheriff", sheriff, self.text["sheriff"].format(t=check) + act, "night")
            if self.failures.get((self.round, "night_sheriff", sheriff)) is None:
                res = "Mafia" if self.role[check] == "Mafia" else "Not Mafia"
                self.add("night_sheriff_result", sheriff=sheriff, checked=check, result=res)
        if kill is not None and kill == protect and doc is not None:
            self.add("night_save", saved=kill)
            self.night_result = f"The Doctor saved {kill}!"
        elif kill is not None:
            self.add("night_kill", victim=kill)
            self.alive.remove(kill)
            self.night_result = f"{kill} was killed by the Mafia."
        else:
            self.night_result = "No one was killed tonight."
        if self.winner() is not None:
            return  # the game ends at night: no announcement
        self.seq += 1  # the announcement takes a message number
        self.add("night_analysis", night_result=self.night_result)

    def winner(self) -> str | None:
        mafia = sum(self.role[n] == "Mafia" for n in self.alive)
        if mafia == 0:
            return "Villagers"
        return "Mafia" if mafia >= len(self.alive) - mafia else None

    def autoplay(self, *, sheriff_fail: int | None = None) -> None:
        """Play to the end: the Mafia kill a random townsperson, suspicion leans toward the Mafia."""
        self.intro()
        while self.winner() is None:
            town = [n for n in self.alive if self.role[n] != "Mafia"]
            others = [n for n in self.alive if self.role[n] != "Sheriff"]
            sheriff = next((n for n in self.alive if self.role[n] == "Sheriff"), None)
            check = self.rng.choice([n for n in self.alive if n != sheriff]) if sheriff else None
            if sheriff and self.round + 1 == sheriff_fail:
                self.failures[(self.round + 1, "night_sheriff", sheriff)] = ""
            self.night(kill=self.rng.choice(town), protect=self.rng.choice(others), check=check)
            if self.winner() is not None:
                break
            mafia = [n for n in self.alive if self.role[n] == "Mafia"]
            suspect = mafia[0] if self.rng.random() < 0.7 else self.rng.choice(self.alive)
            votes = {}
            for n in self.alive:
                if self.role[n] == "Mafia" or n == suspect:
                    votes[n] = self.rng.choice([x for x in self.alive if x != n and self.role[x] != "Mafia"])
                else:
                    votes[n] = suspect
            accuse = {n: t for n, t in votes.items() if self.rng.random() < 0.7}
            self.day(accuse, votes)
        self.over(self.winner() or "Mafia")

    def day(self, accuse: dict[str, str], votes: dict[str, str], bold: tuple[str, ...] = ()) -> str | None:
        for n in list(self.alive):
            t = accuse.get(n)
            text = self.line("accuse", n, t) if t else self.line("calm", n, self.rng.choice(self.alive))
            self.say("day_discuss", n, text, "day_discuss")
        for n in list(self.alive):
            key = "vote_bold" if n in bold else "vote"
            self.say("day_vote", n, self.text[key].format(t=votes[n]), "day_vote")
        tally: dict[str, int] = {}
        for t in votes.values():
            tally[t] = tally.get(t, 0) + 1
        self.add("vote_tally", tally=tally, votes=dict(votes))
        top = max(tally.values())
        leaders = [t for t, c in tally.items() if c == top]
        out = None
        if len(leaders) == 1:
            out = leaders[0]
            self.add("day_eliminate", eliminated=out, role=self.role[out], votes=top)
            self.alive.remove(out)
        self.probe_all("round_end")
        return out

    def over(self, winner: str, **extra: Any) -> None:
        self.add("game_over", winner=winner, **extra)

    def write(self, corpus: str) -> Path:
        d = HERE / corpus / self.gid
        d.mkdir(parents=True, exist_ok=True)
        _jsonl(d / "game.jsonl", self.records)
        if self.probe_mode is not None:
            _jsonl(d / "introspection.jsonl", self.probes)
        if self.snapshots:
            _jsonl(d / "state.jsonl", self.snaps)
        return d


def roll_fmt(rng: random.Random) -> bool:
    """Whether an answer is pretty-printed (as models often do) rather than compact."""
    return rng.random() < 0.2


def _jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


SEVEN = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray"]


def seven(roles: list[str], names: list[str] = SEVEN) -> list[tuple[str, str]]:
    return list(zip(names, roles, strict=True))


def en_demo() -> None:
    # A: mafia win; a save, a tie with no elimination, snapshots, revised probes, emphasis in a vote
    g = Game(
        "0a7f3c10-1111-4aaa-8aaa-000000000001",
        seven(["Villager", "Mafia", "Doctor", "Villager", "Mafia", "Villager", "Villager"]),
        seed=1,
    )
    g.probe_mode, g.snapshots = "revised", True
    g.setup()
    g.intro()
    g.night(kill="Alex", protect="Casey")
    g.day(
        {"Casey": "Bailey", "Dana": "Ellis", "Bailey": "Dana", "Ellis": "Dana"},
        {"Bailey": "Dana", "Casey": "Bailey", "Dana": "Ellis", "Ellis": "Dana", "Finley": "Bailey", "Gray": "Ellis"},
        bold=("Finley",),
    )  # a tie: no elimination
    g.night(kill="Casey", protect="Casey")  # saved
    g.day(
        {"Casey": "Ellis", "Gray": "Ellis", "Bailey": "Gray"},
        {"Bailey": "Gray", "Casey": "Ellis", "Dana": "Gray", "Ellis": "Gray", "Finley": "Gray", "Gray": "Ellis"},
    )
    g.night(kill="Casey", protect="Dana")  # parity: the game ends at night
    g.over("Mafia")
    g.write("en_demo")
    # B: town win; game_type/skin/language and backends, transport errors in probes
    g = Game(
        "0b7f3c10-2222-4bbb-8bbb-000000000002",
        seven(
            ["Mafia", "Villager", "Villager", "Doctor", "Villager", "Mafia", "Villager"],
            ["Harper", "Indigo", "Jordan", "Kennedy", "Logan", "Alex", "Bailey"],
        ),
        seed=2,
    )
    g.probe_mode, g.triggers = "revised", {"intro_last"}
    g.setup(game_type="mafia", skin="mafia", language="en", backends=BACKENDS)
    g.intro()
    g.night(kill="Indigo", protect="Kennedy")
    g.day(
        {"Jordan": "Harper", "Kennedy": "Harper", "Logan": "Alex", "Harper": "Logan"},
        {
            "Harper": "Logan",
            "Jordan": "Harper",
            "Kennedy": "Harper",
            "Logan": "Harper",
            "Alex": "Logan",
            "Bailey": "Harper",
        },
    )
    g.night(kill="Kennedy", protect="Jordan")
    g.day(
        {"Jordan": "Alex", "Logan": "Alex", "Bailey": "Alex"},
        {"Jordan": "Alex", "Logan": "Alex", "Alex": "Jordan", "Bailey": "Alex"},
    )
    g.over("Villagers", backends=BACKENDS)
    g.write("en_demo")


def ru_clean() -> None:
    # pre-revision logger: no chain_used_raw_fallback, role answers cut at max_tokens, chained demand sentence
    for k, (gid, roles, kills) in enumerate(
        [
            (
                "1c7f3c10-3333-4ccc-8ccc-000000000003",
                ["Villager", "Villager", "Mafia", "Doctor", "Villager", "Mafia", "Villager"],
                ["Dana", "Alex"],
            ),
            (
                "1d7f3c10-4444-4ddd-8ddd-000000000004",
                ["Mafia", "Doctor", "Villager", "Villager", "Mafia", "Villager", "Villager"],
                ["Casey", "Bailey"],
            ),
        ]
    ):
        g = Game(gid, seven(roles), seed=10 + k, lang="ru")
        g.probe_mode = "legacy"
        if k == 1:
            g.triggers = set()  # round-end probes only
        g.setup()
        g.intro()
        mafia = [n for n in SEVEN if g.role[n] == "Mafia"]
        town = [n for n in SEVEN if g.role[n] != "Mafia"]
        g.night(kill=kills[0], protect=town[-1])
        target = mafia[0]
        votes = {n: (target if n != target else town[-1]) for n in g.alive}
        g.day({n: target for n in town[:2] if n in g.alive}, votes)
        g.night(kill=kills[1], protect=town[-1])
        votes = {n: (town[-2] if g.role[n] == "Mafia" else mafia[1]) for n in g.alive}
        votes[mafia[1]] = town[-2]
        out = g.day({town[-2]: mafia[1]}, votes)
        g.over("Villagers" if out == mafia[1] and mafia[0] not in g.alive else "Mafia")
        g.write("ru_clean")


def corpus_v2() -> None:
    roles = ["Villager", "Mafia", "Villager", "Doctor", "Villager", "Mafia", "Villager"]
    # c1: transport errors and empty answers in every kind of turn
    g = Game("2a7f3c10-5555-4eee-8eee-000000000005", seven(roles), seed=20)
    g.failures = {
        (0, "intro", "Casey"): "",
        (1, "night_mafia", "Bailey"): ERROR_RESET,
        (1, "night_doctor", "Dana"): ERROR_POOL,
        (1, "day_discuss", "Ellis"): ERROR_RESET,
        (1, "day_vote", "Gray"): ERROR_RESET,
        (1, "day_discuss", "Casey"): "",
        (2, "day_vote", "Casey"): "",
    }
    g.setup(backends=BACKENDS)
    g.intro()
    g.night(kill="Alex", protect="Dana")
    g.day(
        {"Casey": "Bailey", "Dana": "Bailey", "Gray": "Finley"},
        {
            "Bailey": "Casey",
            "Casey": "Bailey",
            "Dana": "Bailey",
            "Ellis": "Bailey",
            "Finley": "Casey",
            "Gray": "Bailey",
        },
    )
    g.night(kill="Dana", protect="Casey")
    g.day(
        {"Casey": "Finley", "Gray": "Finley"},
        {"Casey": "Finley", "Ellis": "Finley", "Finley": "Casey", "Gray": "Finley"},
    )
    g.over("Villagers", backends=BACKENDS)
    g.write("corpus_v2")
    # c2, c3: a Sheriff instead of one Villager; results "Mafia" and "Not Mafia"
    sheriff_roles = ["Villager", "Mafia", "Sheriff", "Doctor", "Villager", "Mafia", "Villager"]
    for k, (gid, checks) in enumerate(
        [
            ("2b7f3c10-6666-4fff-8fff-000000000006", ["Bailey", "Finley"]),
            ("2c7f3c10-7777-4aaa-9aaa-000000000007", ["Alex", "Ellis"]),
        ]
    ):
        g = Game(gid, seven(sheriff_roles), seed=30 + k)
        g.setup(backends=BACKENDS)
        g.intro()
        g.night(kill="Gray", protect="Dana", check=checks[0])
        g.day(
            {"Casey": "Bailey", "Alex": "Finley"},
            {
                "Alex": "Bailey",
                "Bailey": "Alex",
                "Casey": "Bailey",
                "Dana": "Bailey",
                "Ellis": "Bailey",
                "Finley": "Alex",
            },
        )
        g.night(kill="Alex", protect="Casey", check=checks[1])
        g.day(
            {"Casey": "Finley", "Dana": "Finley"},
            {"Casey": "Finley", "Dana": "Finley", "Ellis": "Finley", "Finley": "Casey"},
        )
        g.over("Villagers", backends=BACKENDS)
        g.write("corpus_v2")
    # c4..c6: plain games played to the end (ties possible), many accusations for the annotator
    for k, gid in enumerate(
        [
            "2d7f3c10-8888-4bbb-9bbb-000000000008",
            "2e7f3c10-9999-4ccc-9ccc-000000000009",
            "2f7f3c10-aaaa-4ddd-9ddd-00000000000a",
        ]
    ):
        g = Game(gid, seven(roles), seed=40 + k)
        g.setup(backends=BACKENDS)
        g.autoplay()
        g.records[-1]["backends"] = BACKENDS
        g.write("corpus_v2")


def family() -> None:
    roles = ["Villager", "Mafia", "Doctor", "Villager", "Mafia", "Villager", "Villager"]
    g = Game("3a7f3c10-bbbb-4eee-9eee-00000000000b", seven(roles), seed=50)
    g.setup(game_type="werewolf_skin", skin="werewolf", language="en")
    g.actions = True
    g.autoplay()
    g.write("game_family_showcase")
    # a seer (role Sheriff) whose second check came back empty: no result record that night
    g = Game(
        "3b7f3c10-cccc-4fff-9fff-00000000000c",
        seven(["Villager", "Mafia", "Doctor", "Sheriff", "Mafia", "Villager", "Villager"]),
        seed=51,
    )
    g.setup(game_type="werewolf_seer", skin="werewolf", language="en")
    g.actions = True
    g.autoplay(sheriff_fail=2)
    g.write("game_family_showcase")
    # resistance: 5 seats, team missions only
    five = [
        ("Harper", "Resistance"),
        ("Indigo", "Spy"),
        ("Jordan", "Resistance"),
        ("Kennedy", "Spy"),
        ("Logan", "Resistance"),
    ]
    g = Game("3c7f3c10-dddd-4aaa-aaaa-00000000000d", five, seed=52)
    g.setup(game_type="resistance", language="en")
    for n in g.names:
        g.say("intro", n, g.line("intro", n), "intro")
    # mission 1 as MafiaScope's Resistance module plays it (the rules of mafiascope-resistance):
    # the lead passes in seat order, teams of 2, public votes in seat order, a failed turn
    # (empty or ERROR) is a blank vote counted as Reject; the fifth rejection ends the game
    g.round = 1
    plans = [  # (leader's message, team, the players approving, failed voters)
        ("I propose Harper and Jordan.", ["Harper", "Jordan"], {"Harper", "Jordan"}, {"Logan"}),
        ("", ["Indigo", "Harper"], {"Indigo", "Kennedy"}, set()),
        ("Jordan and Logan, please.", ["Jordan", "Logan"], {"Jordan", "Logan"}, {"Indigo"}),
        ("ERROR: timeout", ["Kennedy", "Harper"], {"Kennedy"}, {"Harper", "Jordan"}),
        ("Logan and Indigo go.", ["Logan", "Indigo"], {"Logan", "Indigo"}, set()),
    ]
    for leader, (said, team, approving, failed) in zip(g.names, plans, strict=True):
        g.seq = 1
        g.add("team_proposal", leader=leader, response=said, msg_seq=g.seq)
        g.add("team_final", leader=leader, team=team)
        votes = {}
        for n in g.names:
            g.seq += 1
            v = "Approve" if n in approving and n not in failed else "Reject"
            votes[n] = v
            reply = f"VOTE: {v}. I have my reasons about {' and '.join(team)}."
            if n in failed:
                reply = "ERROR: connection reset" if n == "Jordan" else ""
            g.add("team_vote", player=n, response=reply, msg_seq=g.seq)
        approvals = sum(v == "Approve" for v in votes.values())
        g.add("team_vote_tally", votes=votes, approvals=approvals, approved=False)
    g.over("Spy", wins={"Resistance": 0, "Spy": 0})
    g.write("game_family_showcase")


def traps() -> None:
    roles = ["Villager", "Mafia", "Doctor", "Villager", "Mafia", "Villager", "Villager"]
    # setup only, with an empty introspection file
    g = Game("4a7f3c10-eeee-4bbb-abbb-00000000000e", seven(roles), seed=60)
    g.setup()
    d = g.write("traps")
    (d / "introspection.jsonl").write_text("", encoding="utf-8")
    # aborted: no game_over; its state.jsonl is a Git LFS pointer
    g = Game("4b7f3c10-ffff-4ccc-accc-00000000000f", seven(roles), seed=61)
    g.setup()
    g.intro()
    g.night(kill="Alex", protect="Casey")
    d = g.write("traps")
    (d / "state.jsonl").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 151170829\n", encoding="utf-8"
    )
    # a bifurcation fork: starts at round 1 with an injected message, no intro
    g = Game("4c7f3c10-0000-4ddd-addd-000000000010", seven(roles), seed=62)
    g.setup(
        round_=1,
        forked_from="0a7f3c10-1111-4aaa-8aaa-000000000001",
        fork_point=[1, 7],
        language="en",
        fork_batch_id=None,
        intervention={
            "type": "inject_message",
            "player": "Casey",
            "variant_idx": 3,
            "source": "sampled",
            "sample_idx": 12,
            "temperature": 1.0,
            "experiment": "fixture_bifurcation",
        },
    )
    g.round, g.seq = 1, 6
    g.day({"Casey": "Bailey", "Dana": "Bailey"}, {n: ("Bailey" if n != "Bailey" else "Casey") for n in g.alive})
    g.over("Villagers", backends=BACKENDS)
    g.write("traps")
    # a replay fork: batch id and replica index, suspicion-only probes
    g = Game("4d7f3c10-1212-4eee-aeee-000000000011", seven(roles), seed=63)
    g.probe_mode = "suspicion_only"
    g.setup(
        round_=1,
        forked_from="0a7f3c10-1111-4aaa-8aaa-000000000001",
        fork_point=[1, 9],
        fork_batch_id="5e8f0000-0000-4000-8000-000000000001",
        replica_idx=0,
        intervention=None,
    )
    g.round, g.seq = 1, 8
    g.day({"Ellis": "Bailey"}, {n: ("Ellis" if n in ("Bailey", "Ellis") else "Bailey") for n in g.alive})
    g.over("Villagers")
    g.write("traps")
    # a ledger file beside the game directories (not a game)
    (HERE / "traps" / "run_ledger.jsonl").write_text(
        json.dumps(
            {
                "seed": 1,
                "game_id": "0a7f3c10-1111-4aaa-8aaa-000000000001",
                "winner": "Mafia",
                "rounds": 3,
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "calls": 1},
                "cost_usd": 0.0,
                "err_frac": 0.0,
                "duration_s": 1.0,
                "ts": 1.8e9,
            }
        )
        + "\n",
        encoding="utf-8",
    )


CONFIG = """\
# A probe battery in MafiaScope's config layout, written for the mafialab tests.
game:
  max_rounds: 10
  language: {lang}
  intro_round: true

players:
  - role: Mafia
    backend: chatgpt
  - role: Mafia
    backend: chatgpt
  - role: Doctor
    backend: chatgpt
  - role: Villager
    backend: chatgpt
  - role: Villager
    backend: chatgpt
  - role: Villager
    backend: chatgpt
  - role: Villager
    backend: chatgpt

introspection:
  enabled: true
  after_each_message: true
  after_each_round: {after_round}
  probes:
    - id: role_assessment
      max_tokens: 900
      question: >
        You are {{player}}. Your last role guesses were:
        {{last_role_assessment}}

        For every living player ({{players}}), yourself included, say
        which role you now believe they hold, how sure you are (0-100)
        and why, in one short reason.
        Reply with JSON only:
        [{{{{"player": "...", "guessed_role": "Mafia|Villager|Doctor|Unknown", "confidence": N, "reason": "..."}}}}]

    - id: suspicion_ranking
      question: >
        Put the living players ({{players}}) in order from most to least
        suspicious. Reply with JSON only: [{{{{"player": "...", "score": N}}}}]

    - id: social_map
      max_tokens: 900
      question: >
        You are {{player}}. Your current role guesses:
        {{prev_role_assessment}}

        Last time you read the table like this:
        {{last_social_map}}
{demand}
        How does each living player ({{players}}) feel about you now?
        Reply with JSON only:
        {{{{"toward_me": [{{{{"player": "...", "attitude": "trusts|neutral|suspects", "confidence": N, "reason": "..."}}}}]}}}}

    - id: planned_action
      when: own_turn
      max_tokens: 1000
      question: >
        You are {{player}}. Given your role guesses
        ({{prev_role_assessment}}) and how others see you
        ({{prev_social_map}}), what will you do next and toward whom?
        Reply with JSON only: {{{{"action": "...", "target": "...", "reasoning": "..."}}}}
"""


def configs() -> None:
    d = HERE / "configs"
    d.mkdir(exist_ok=True)
    (d / "config_en_demo.yaml").write_text(CONFIG.format(lang="en", after_round="true", demand=""), encoding="utf-8")
    demand = "        If you suspect someone, they may be able to tell.\n"
    (d / "config_deepseek.yaml").write_text(
        CONFIG.format(lang="en", after_round="false", demand=demand), encoding="utf-8"
    )


def main() -> None:
    for c in (*CORPORA, "configs"):
        shutil.rmtree(HERE / c, ignore_errors=True)
    en_demo()
    ru_clean()
    corpus_v2()
    family()
    traps()
    configs()


if __name__ == "__main__":
    main()
