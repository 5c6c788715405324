#!/usr/bin/env bash
# Differential test of secretmafia6 against TextArena's SecretMafia-v0 (textarena 0.7.4).
#
# Usage: scripts/check_textarena.sh [N] [--freeze]
#   Builds (once) a virtual environment with textarena==0.7.4 in $TEXTARENA_VENV (default
#   /work/venvs/textarena, or .venv-textarena beside the checkout), plays N seeded games there
#   (default 50; only TextArena's SecretMafia module is imported), then plays the same deals
#   and actions through mafialab's engine and compares eliminations, night results, votes,
#   the Detective's checks and the winner (tests/rules/test_secretmafia_textarena.py).
#   --freeze rewrites the fixture the regular suite uses (tests/data/textarena/, 20 seeds).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n="${1:-50}"
venv="${TEXTARENA_VENV:-$( [ -d /work/venvs ] && echo /work/venvs/textarena || echo "$root/.venv-textarena" )}"
py="${PYTHON:-$root/.venv/bin/python}"
[ -x "$py" ] || py="$(command -v python3)"
if ! "$venv/bin/python" -c "import textarena.envs.SecretMafia.env" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "textarena==0.7.4"
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$venv/bin/python" "$root/scripts/textarena_deals.py" "$n" "$out/deals.json"
MAFIALAB_TEXTARENA_DEALS="$out/deals.json" PYTHONPATH="$root/src" \
  "$py" -m pytest -n 0 -q -p no:randomly "$root/tests/rules/test_secretmafia_textarena.py" -k same_deal
if [ "${2:-}" = "--freeze" ]; then
  "$venv/bin/python" "$root/scripts/textarena_deals.py" 20 "$root/tests/data/textarena/secretmafia6_deals.json"
fi
