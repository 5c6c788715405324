"""The embedded model's threads are the cores the process may really run on (affinity, cores, quota)."""

from __future__ import annotations

import os

import pytest

from mafialab.models import embedded_threads, get_model, local_model_available


@pytest.mark.parametrize(
    ("cpus", "physical", "quota", "want"),
    [
        (2, 2, None, 2),  # the development machine
        (16, 8, None, 8),  # hyperthreads: physical cores only
        (4, 8, None, 4),  # affinity smaller than the machine: the CPUs this process may use
        (16, 16, 2, 2),  # a container's CPU quota (docker --cpus=1.5 gives 2)
        (1, 1, None, 1),
    ],
)
def test_threads_are_the_usable_cores(cpus: int, physical: int, quota: int | None, want: int) -> None:
    assert embedded_threads(cpus=cpus, physical=physical, quota=quota) == want


def test_defaults_read_the_machine() -> None:
    assert 1 <= embedded_threads() <= len(os.sched_getaffinity(0))


@pytest.mark.skipif(not local_model_available("smollm2"), reason="embedded model not installed")
@pytest.mark.xdist_group("embedded")
def test_the_loaded_model_uses_the_choice_or_the_option() -> None:
    # prompt processing too: llama-cpp-python's own n_threads_batch default is every CPU
    auto = get_model("local/smollm2")
    assert auto.n_threads == embedded_threads()  # type: ignore[attr-defined]
    assert auto._llm.n_threads == auto._llm.n_threads_batch == auto.n_threads  # type: ignore[attr-defined]
    one = get_model("local/smollm2?n_threads=1")
    assert one.n_threads == 1 and one._llm.n_threads_batch == 1  # type: ignore[attr-defined]
