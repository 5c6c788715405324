#!/usr/bin/env bash
# Differential test of kaggle-werewolf7/8 (and examples/rules/kaggle/) against Kaggle Game Arena's
# Werewolf (kaggle-environments 1.33.2).
#
# Usage: scripts/check_kaggle.sh [--seeds N] [--freeze]
#        scripts/check_kaggle.sh --unseen N [--keep DIR]
#   Builds (once) a virtual environment with kaggle-environments==1.33.2 plus the evaluator's
#   imports (polarix, plotly, openskill) in $KAGGLE_VENV (default /work/venvs/kaggle, or
#   .venv-kaggle beside the checkout), plays N seeded games per rule set there (default 30) with
#   Kaggle's random agents (scripts/kaggle_deals.py), then plays the same deals and actions through
#   mafialab's engine and compares eliminations, night results, votes, the Seer's checks and the
#   winner (tests/rules/test_kaggle_engine.py). --freeze rewrites the fixtures the regular suite
#   uses (tests/data/kaggle/: 5 seeds per rule set, 3 replays and the evaluator's figures for them, one replay of
#   Kaggle's unwrapped random agents with a tied day vote).
#   --unseen N: "a folder of Kaggle episodes we never saw": plays N new episodes with Kaggle's own
#   random agents (seeds from 10000, agent labels no fixture uses, kaggle-werewolf7/8 alternating),
#   runs Kaggle's evaluator on them, then `mafialab import kaggle` + `mafialab report --by agent
#   --format json` (this checkout's code) and compares per-agent and per-role games, win rates, KSR,
#   Elo and OpenSkill (scripts/kaggle_deals.py --compare); exits 1 on any difference. --keep DIR
#   keeps the episodes, logs and both figure files there (default: a temporary folder).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n=30
freeze=0
unseen=0
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) n="$2"; shift 2 ;;
    --freeze) freeze=1; shift ;;
    --unseen) unseen="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "usage: $0 [--seeds N] [--freeze] | --unseen N [--keep DIR]" >&2; exit 2 ;;
  esac
done
venv="${KAGGLE_VENV:-$( [ -d /work/venvs ] && echo /work/venvs/kaggle || echo "$root/.venv-kaggle" )}"
py="${PYTHON:-$root/.venv/bin/python}"
[ -x "$py" ] || py="$(command -v python3)"
if ! "$venv/bin/python" -c "import kaggle_environments.envs.werewolf.eval.metrics" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kaggle-environments==1.33.2" polarix plotly openskill
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
if [ "$unseen" -gt 0 ]; then
  dir="${keep:-$out}"
  mkdir -p "$dir"
  "$venv/bin/python" "$root/scripts/kaggle_deals.py" --unseen "$unseen" "$dir"
  PYTHONPATH="$root/src" "$py" -m mafialab import kaggle "$dir/episodes" --out "$dir/logs"
  PYTHONPATH="$root/src" "$py" -m mafialab report "$dir/logs" --by agent --format json > "$dir/report.json"
  "$venv/bin/python" "$root/scripts/kaggle_deals.py" --compare "$dir/evaluator.json" "$dir/report.json"
  exit 0
fi
"$venv/bin/python" "$root/scripts/kaggle_deals.py" "$n" "$out/deals.json"
MAFIALAB_KAGGLE_DEALS="$out/deals.json" PYTHONPATH="$root/src" \
  "$py" -m pytest -n 0 -q -p no:randomly "$root/tests/rules/test_kaggle_engine.py" -k same_deal
if [ "$freeze" = 1 ]; then
  data="$root/tests/data/kaggle"
  rm -rf "$data/replays"
  "$venv/bin/python" "$root/scripts/kaggle_deals.py" 5 "$data/deals.json" \
    --replays "$data/replays" 3 --tie-replay "$data/tie_replay.json" --figures "$data/evaluator_figures.json"
fi
