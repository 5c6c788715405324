"""QA regressions: malformed probe batteries are ProbeBatteryErrors naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafialab.probes import ProbeBatteryError, load_battery


@pytest.mark.parametrize("value", ["5", "true", "1.5"])
def test_mafiascope_block_whose_probes_is_not_a_list(tmp_path: Path, value: str) -> None:
    p = tmp_path / "cfg.yaml"
    p.write_text(f"introspection:\n  enabled: true\n  probes: {value}\n")
    with pytest.raises(ProbeBatteryError, match=r"cfg\.yaml: introspection\.probes"):
        load_battery(p)
