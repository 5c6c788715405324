"""A small table type rendered as Markdown, LaTeX and CSV."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field

from mafialab.analysis import Stat

Cell = str | int | float | Stat | None


def _num(x: float, digits: int) -> str:
    if math.isnan(x):
        return "–"
    s = f"{x:.{digits}f}"
    return "0." + "0" * digits if s in ("-0." + "0" * digits,) else s


def fmt_cell(c: Cell, digits: int = 2, *, latex: bool = False) -> str:
    """Text of a cell: a :class:`Stat` as ``mean ± half``; ``mean`` alone when it has no interval.

    No interval: the half-width is ``nan`` (fewer than 2 responses, or games for a cluster CI)
    or exactly 0 (every response the same value: zero variance says nothing about the spread
    of a model's answers, so ``0.00 ± 0.00`` is never printed). The tables' notes say why.
    """
    if c is None:
        return ""
    if isinstance(c, Stat):
        if c.n == 0 or math.isnan(c.mean):
            return "–"
        if math.isnan(c.half) or c.half == 0:
            return _num(c.mean, digits)
        pm = " $\\pm$ " if latex else " ± "
        return f"{_num(c.mean, digits)}{pm}{_num(c.half, digits)}"
    if isinstance(c, float):
        return _num(c, digits)
    return str(c)


_LATEX_ESC = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"$<$",
    ">": r"$>$",
    "±": r"$\pm$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "–": "--",
    "−": "-",
}


def latex_escape(s: str) -> str:
    """Escape LaTeX special characters."""
    return "".join(_LATEX_ESC.get(ch, ch) for ch in s)


@dataclass
class Table:
    """A table of a report.

    Attributes:
        name: File stem (``table1_groups``).
        title: Caption.
        columns: Column headers.
        rows: Rows, one cell per column.
        notes: Lines printed under the table (protocol, how CIs are computed).
        digits: Decimals of numbers.
    """

    name: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    digits: int = 2

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown, caption as a heading, notes below."""
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        out = [f"### {self.title}", "", "| " + " | ".join(esc(c) for c in self.columns) + " |"]
        out.append("|" + "|".join("---" for _ in self.columns) + "|")
        for r in self.rows:
            out.append("| " + " | ".join(esc(fmt_cell(c, self.digits)) for c in r) + " |")
        if self.notes:
            out += [""] + [f"_{n}_" for n in self.notes]
        return "\n".join(out) + "\n"

    def to_latex(self) -> str:
        """A ``table`` environment with a booktabs ``tabular``."""
        spec = "l" * 1 + "r" * (len(self.columns) - 1)
        out = [
            "\\begin{table}[ht]",
            "\\centering",
            f"\\caption{{{latex_escape(self.title)}}}",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(latex_escape(c) for c in self.columns) + " \\\\",
            "\\midrule",
        ]
        for r in self.rows:
            cells = [
                fmt_cell(c, self.digits, latex=True) if isinstance(c, Stat) else latex_escape(fmt_cell(c, self.digits))
                for c in r
            ]
            out.append(" & ".join(cells) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}"]
        for n in self.notes:
            out.append(f"\\par\\footnotesize {latex_escape(n)}")
        out.append("\\end{table}")
        return "\n".join(out) + "\n"

    def csv_columns(self) -> list[str]:
        """CSV header: a :class:`Stat` column ``c`` becomes ``c`` (mean), ``c ci95`` (half-width), ``c n``."""
        cols: list[str] = []
        for j, c in enumerate(self.columns):
            if any(isinstance(r[j], Stat) for r in self.rows):
                cols += [c, f"{c} ci95", f"{c} n"]
            else:
                cols.append(c)
        return cols

    def to_csv(self) -> str:
        """CSV with full precision; empty fields for missing values."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.csv_columns())
        stat_cols = [any(isinstance(r[j], Stat) for r in self.rows) for j in range(len(self.columns))]
        for r in self.rows:
            row: list[str] = []
            for j, c in enumerate(r):
                if stat_cols[j]:
                    s = c if isinstance(c, Stat) else None
                    if s is None or s.n == 0:
                        row += ["", "", "0" if s is not None else ""]
                    else:
                        row += [
                            "" if math.isnan(s.mean) else repr(s.mean),
                            "" if math.isnan(s.half) else repr(s.half),
                            str(s.n),
                        ]
                elif isinstance(c, float):
                    row.append("" if math.isnan(c) else repr(c))
                else:
                    row.append("" if c is None else str(c))
            w.writerow(row)
        return buf.getvalue()
