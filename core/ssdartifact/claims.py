"""Claims as code: each thesis claim in configs/claims/ is a check over tidy CSVs.

Check kinds (all evaluated inside one CSV, never across machines):
  value      one selected row's column is within a tolerance of the thesis's number
  monotone   y is monotone in x within every group
  all_rows   a boolean expression holds on every selected row (if_none: the reason
             to report 'not run' when no row is selected, e.g. no flash device measured)
  compare    an aggregate of one selection is above/below an aggregate of another (if_none:
             'not run' with that reason when a selection is empty)
  influence  how much y changes along one axis (max/min, geometric mean over the
             other axis) compared with another axis, or trending over a group variable
A claim whose data file does not exist (its experiment is not in the profile, or this machine
could not run it: `not_run` says why and how to run it) is reported as 'not run', never as passed.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import REPO_ROOT
from .files import atomic_write_text
from .tidy import write_csv

PASS, FAIL, NOT_RUN = "pass", "fail", "not run"


@dataclass
class Outcome:
    status: str
    measured: str
    detail: str
    # how far it holds, as a number: the share of rows (all_rows) or groups (monotone) that hold, a
    # compare's left / right, a value's measured number (None: not run, or an influence check)
    score: float | None = None


def _select(frame: pd.DataFrame, where: str | None) -> pd.DataFrame:
    return frame.query(where) if where else frame


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _aggregate(frame: pd.DataFrame, column: str, how: str) -> float:
    if frame.empty and how != "count":  # counting nothing is 0; the others have no value
        raise ValueError("the selection is empty")
    return float(getattr(frame[column], how)())


def value_of(frame: pd.DataFrame, column: str, aggregate: str, where: str | None = None) -> float:
    """One number of a CSV as the checks select it: `aggregate` (mean, min, max, sum, count,
    median) of `column` over the rows `where` selects (a pandas query)."""
    return _aggregate(_select(frame, where), column, aggregate)


def check_value(frame: pd.DataFrame, check: dict) -> Outcome:
    rows = _select(frame, check.get("where"))
    if len(rows) != 1:
        raise ValueError(f"'where' must select exactly one row, selected {len(rows)}")
    measured = float(rows[check["column"]].iloc[0])
    expected, tolerance = check["expected"], check["tolerance"]
    ok = abs(measured - expected) <= tolerance
    return Outcome(PASS if ok else FAIL, _fmt(measured), f"expected {expected} ± {tolerance}", measured)


def check_monotone(frame: pd.DataFrame, check: dict) -> Outcome:
    rows = _select(frame, check.get("where"))
    x, y, groups = check["x"], check["y"], check.get("group_by", [])
    increasing = check.get("direction", "increasing") == "increasing"
    strict = check.get("strict", False)
    tolerance = check.get("tolerance", 0.0)
    if rows.empty:
        raise ValueError("the selection is empty")
    failures, count = [], 0
    grouped = rows.groupby(groups, sort=True) if groups else [((), rows)]
    for key, group in grouped:
        count += 1
        ordered = group.sort_values(x)
        values = ordered[y].tolist()
        steps = [b - a if increasing else a - b for a, b in zip(values, values[1:])]
        if any(step < -tolerance or (strict and step <= 0) for step in steps):
            # the group's points, so that a failure in a log says by how much
            points = ", ".join(f"{_fmt(a)}: {_fmt(b)}" for a, b in zip(ordered[x], values))
            names = ", ".join(f"{g}={v}" for g, v in zip(groups, key if isinstance(key, tuple) else (key,)))
            failures.append(f"{names} ({x}: {y} = {points})")
    word = ("strictly " if strict else "") + ("increasing" if increasing else "decreasing") + (
        f" (within {tolerance})" if tolerance else "")
    measured = f"{count - len(failures)} of {count} groups {word} in {x}"
    if failures:
        measured += "; failing: " + "; ".join(failures[:3])
    detail = f"{y} not {word} in {x} in {len(failures)} of {count} groups" if failures else f"{y} {word} in {x}"
    return Outcome(FAIL if failures else PASS, measured, detail, (count - len(failures)) / count)


def check_all_rows(frame: pd.DataFrame, check: dict) -> Outcome:
    rows = _select(frame, check.get("where"))
    if rows.empty and "if_none" in check:  # a claim about devices this profile did not measure
        return Outcome(NOT_RUN, "", check["if_none"])
    if rows.empty:
        raise ValueError("the selection is empty")
    holds = rows.eval(check["expression"])
    bad = int((~holds).sum())
    measured = f"{len(rows) - bad} of {len(rows)} rows"
    if "repetitions" in rows:
        counts = sorted(set(rows["repetitions"].astype(int)))
        runs = "-".join(map(str, (counts[0], counts[-1]))) if len(counts) > 1 else counts[0]
        measured += f", each the mean of {runs} run(s)"
    if bad:
        measured += "; failing: " + "; ".join(_row_values(row, check["expression"])
                                              for _, row in rows[~holds].head(3).iterrows())
    return Outcome(FAIL if bad else PASS, measured, f"{check['expression']}" + (f" fails on {bad} rows" if bad else ""),
                   (len(rows) - bad) / len(rows))


# Columns that say which point a row is and how spread its repetitions were, shown for a failing row.
_IDENTITY = ("device", "workload", "policy", "variant", "graph", "system", "io_threads", "cache_fraction")
_SPREAD = ("runtime_min_s", "runtime_max_s", "runtime_sd")


def _row_values(row: pd.Series, expression: str) -> str:
    """A failing row: what identifies it, the columns the expression reads, and the spread."""
    used = [c for c in row.index if c in expression]
    shown = [c for c in (*_IDENTITY, *used, *_SPREAD) if c in row.index and pd.notna(row[c])]
    return ", ".join(f"{c}={_fmt(row[c]) if isinstance(row[c], float) else row[c]}" for c in dict.fromkeys(shown))


def _side_value(rows: pd.DataFrame, spec: dict) -> float:
    """A compare side's number: its aggregate over the rows or, with `per`, over one statistic per
    group (e.g. the highest of each other policy's median over its repeats, so that one noisy
    repeat does not decide)."""
    per = spec.get("per")
    if per:
        rows = rows.groupby(per["group_by"])[spec["column"]].agg(per["statistic"]).to_frame()
    return _aggregate(rows, spec["column"], spec.get("aggregate", "mean"))


def check_compare(frames: dict[str, pd.DataFrame], check: dict) -> Outcome:
    sides = [_select(frames[spec["data"]], spec.get("where")) for spec in (check["left"], check["right"])]
    if any(rows.empty for rows in sides) and "if_none" in check:  # e.g. no baseline finished a run
        return Outcome(NOT_RUN, "", check["if_none"])
    left, right = (_side_value(rows, spec) for rows, spec in zip(sides, (check["left"], check["right"])))
    if right == 0:  # an infinite ratio would pass any minimum whatever the left side: never a verdict
        raise ValueError(f"the right side ({check['right']['column']}, {check['right'].get('aggregate', 'mean')}) "
                         f"is 0, so left / right is undefined")
    ratio = left / right
    strict = check.get("strict", True)
    minimum = check.get("min_ratio", None if "max_ratio" in check else 1.0)
    maximum = check.get("max_ratio")
    ok, rules = True, []
    if minimum is not None:
        ok &= ratio > minimum if strict else ratio >= minimum
        rules.append(f"{'>' if strict else '>='} {minimum}")
    if maximum is not None:
        ok &= ratio <= maximum
        rules.append(f"<= {maximum}")
    measured = f"{_fmt(left)} vs {_fmt(right)} (ratio {_fmt(ratio)}){_within_the_noise(sides[0], check['left'], right)}"
    return Outcome(PASS if ok else FAIL, measured, f"left / right must be {' and '.join(rules)}", ratio)


def _within_the_noise(rows: pd.DataFrame, spec: dict, right: float) -> str:
    """When the left side is a median over repeats whose range takes in the right side's value, a
    note that the verdict is within the repeats' spread (another run could turn it)."""
    if spec.get("aggregate") != "median" or len(rows) < 2:
        return ""
    low, high = rows[spec["column"]].min(), rows[spec["column"]].max()
    return f"; within the noise: its {len(rows)} repeats span {_fmt(low)}-{_fmt(high)}" if low <= right <= high else ""


def _influence(group: pd.DataFrame, y: str, axis: str, other: str) -> float:
    """Geometric mean over the levels of `other` of max(y)/min(y) along `axis`."""
    spans = [sub[y].max() / sub[y].min() for _, sub in group.groupby(other)]
    return math.exp(sum(math.log(s) for s in spans) / len(spans))


def check_influence(frame: pd.DataFrame, check: dict) -> Outcome:
    rows = _select(frame, check.get("where"))
    if rows.empty:
        raise ValueError("the selection is empty")
    y, axis, other, group_by = check["y"], check["axis"], check["other_axis"], check["group_by"]
    results = []
    for key, group in rows.groupby(group_by, sort=True):
        results.append((key, _influence(group, y, axis, other), _influence(group, y, other, axis)))
    measured = "; ".join(f"{group_by}={k}: {axis} {_fmt(a)}x, {other} {_fmt(o)}x" for k, a, o in results)
    if check["assert"] == "dominates":
        failing = [k for k, a, o in results if not a > o]
        detail = f"the influence of {axis} must exceed that of {other} in every {group_by}"
    elif check["assert"] == "increasing":
        values = [a for _, a, _ in results]
        failing = [results[i + 1][0] for i in range(len(values) - 1) if not values[i + 1] > values[i]]
        detail = f"the influence of {axis} must grow with {group_by}"
    else:
        raise ValueError(f"unknown influence assertion {check['assert']!r}")
    return Outcome(FAIL if failing else PASS, measured, detail)


def data_files(claim: dict) -> set[str]:
    """The CSVs a claim reads: both sides' of a compare, else its `data`."""
    check = claim["check"]
    return {check[s]["data"] for s in ("left", "right")} if check["kind"] == "compare" else {claim["data"]}


def not_run_detail(reason: dict) -> str:
    """Why a claim (or figure) whose data this machine could not make is not run, and how to run it:
    `reason` holds `why` and `fix` (the command)."""
    return f"not run: {reason['why']}; to run it: {reason['fix']}"


def evaluate(claim: dict, root: Path = REPO_ROOT, available: set[str] | None = None,
             not_run: dict[str, dict] | None = None) -> Outcome:
    """Check one claim; `available` limits it to the CSVs this profile produced (None: any that exist);
    `not_run`: the CSVs the profile would make but this machine could not, with their reasons."""
    check = claim["check"]
    files = data_files(claim)
    missing = sorted(f for f in files if not (root / f).exists() or (available is not None and f not in available))
    reasons = [not_run[f] for f in missing if f in (not_run or {})]
    if reasons:
        return Outcome(NOT_RUN, "", not_run_detail(reasons[0]))
    if missing:
        return Outcome(NOT_RUN, "", f"no data: {', '.join(missing)} (its experiment is not in this profile)")
    frames = {f: pd.read_csv(root / f) for f in files}
    try:
        if check["kind"] == "compare":
            return check_compare(frames, check)
        frame = frames[claim["data"]]
        return {"value": check_value, "monotone": check_monotone, "all_rows": check_all_rows,
                "influence": check_influence}[check["kind"]](frame, check)
    except (KeyError, ValueError, pd.errors.UndefinedVariableError, SyntaxError) as error:
        return Outcome(FAIL, "", f"the check could not be evaluated: {error}")


REPORT_COLUMNS = {
    "id": "claim identifier",
    "chapter": "thesis chapter",
    "item": "figure, table or section the claim is about",
    "thesis_line": "line of the thesis text the quote comes from",
    "status": "pass, fail or not run",
    "measured": "what the check measured",
    "detail": "what the check requires",
    "known_reason": "for a failure this profile is known to show (configs/claims/, may_fail): why",
    "quote": "the thesis's words",
}


# A number of this run in a known failure's reason: {max:column}, {min:column} or {mean:column} over the rows the
# claim's check selects, so that the reason quotes what was measured instead of a number typed once.
MEASURED_IN_REASON = re.compile(r"\{(max|min|mean):([A-Za-z_][A-Za-z0-9_]*)\}")


def reason_numbers(reason: str, claim: dict, root: Path = REPO_ROOT) -> str:
    """The reason with each {max|min|mean:column} replaced by that number of this run's data."""
    if not MEASURED_IN_REASON.search(reason):
        return reason
    check = claim["check"]
    spec = check["left"] if check["kind"] == "compare" else {"data": claim["data"], "where": check.get("where")}
    rows = _select(pd.read_csv(root / spec["data"]), spec.get("where"))
    return MEASURED_IN_REASON.sub(lambda m: _fmt(_aggregate(rows, m[2], m[1])), reason)


def known_reason(claim: dict, profile: str | None, root: Path = REPO_ROOT) -> str:
    """Why this claim is known to fail in `profile` ('' if it is expected to hold there), with this
    run's numbers in it (reason_numbers)."""
    may_fail = claim.get("may_fail")
    if not (may_fail and profile in may_fail["profiles"]):
        return ""
    try:
        return reason_numbers(may_fail["reason"], claim, root)
    except (KeyError, ValueError, OSError, pd.errors.UndefinedVariableError) as error:
        return f"{may_fail['reason']} [a number it quotes could not be read from this run: {error!r}]"


def evaluate_all(claims: list[dict], root: Path = REPO_ROOT, available: set[str] | None = None,
                 profile: str | None = None, not_run: dict[str, dict] | None = None) -> list[dict]:
    rows = []
    for claim in claims:
        outcome = evaluate(claim, root, available, not_run)
        rows.append({"id": claim["id"], "chapter": claim["chapter"], "item": claim["item"],
                     "thesis_line": claim["thesis_line"], "status": outcome.status,
                     "measured": outcome.measured,
                     "detail": f"{outcome.detail} Scope: {claim['scope']}" if claim.get("scope") else outcome.detail,
                     "known_reason": known_reason(claim, profile, root) if outcome.status == FAIL else "",
                     "quote": readable_quote(claim["quote"])})
    return rows


MATH_WORDS = {r"\times": "×", r"\approx": "≈", r"\leq": "≤", r"\geq": "≥", r"\%": "%", r"\,": " ", r"\sim": "~"}


def readable_quote(quote: str) -> str:
    """A quote as a reader sees it in the thesis, not its Markdown source: configs/claims/ keeps the
    thesis's text verbatim ($2.81\\times$, **Upgrade:**), which the report and the document would
    otherwise print raw."""
    def symbols(math: str) -> str:  # the space after a control word (\\times) is LaTeX's, not the text's
        for command, symbol in MATH_WORDS.items():
            after = r"(?![A-Za-z])\s*" if command[-1].isalpha() else ""
            math = re.sub(re.escape(command) + after, symbol, math)
        return math

    text = re.sub(r"(?<!\\)\$([^$]*)\$", lambda m: symbols(m[1]).strip(), quote)  # inline math, without dollars
    text = symbols(text)  # a \\times outside dollars, as the thesis's Markdown has too
    text = re.sub(r"\*\*(\S(?:[^*]*\S)?)\*\*", r"\1", text)  # **bold**
    text = re.sub(r"(?<![\w*])\*(\S(?:[^*]*\S)?)\*(?![\w*])", r"\1", text)  # *emphasis*
    return re.sub(r"(\d) ×", r"\1×", re.sub(r" {2,}", " ", text)).replace("× ,", "×,")


def unexpected_failures(rows: list[dict]) -> list[str]:
    """The claims that failed where configs/claims/ does not say they may."""
    return [r["id"] for r in rows if r["status"] == FAIL and not r["known_reason"]]


def summary(rows: list[dict]) -> str:
    counts = {s: sum(r["status"] == s for r in rows) for s in (PASS, FAIL, NOT_RUN)}
    unexpected = len(unexpected_failures(rows))
    failed = f"{counts[FAIL]} failed ({counts[FAIL] - unexpected} known at this scale, {unexpected} unexpected)"
    return f"{counts[PASS]} passed, {failed}, {counts[NOT_RUN]} not run (of {len(rows)} claims)"


def _status_text(row: dict) -> str:
    status = row["status"].upper()
    if row["status"] != FAIL:
        return status
    return f"{status} (known at this scale: {row['known_reason']})" if row["known_reason"] else f"{status} (unexpected)"


def not_run_notes(rows: list[dict], not_run: dict[str, dict] | None) -> list[tuple[str, str]]:
    """For each reason this machine could not make some CSVs: what was not run, and the command that
    runs it (`make reproduce` prints them last, from the Markdown report)."""
    notes = []
    for reason in {json.dumps(r, sort_keys=True): r for r in (not_run or {}).values()}.values():
        count = sum(r["detail"].startswith(not_run_detail(reason)) for r in rows)
        claims = f"{count} claim{'' if count == 1 else 's'}"
        notes.append((f"{reason['why']}: {claims} and the figures drawn from the same results", reason["fix"]))
    return notes


def _markdown(rows: list[dict], not_run: dict[str, dict] | None = None) -> str:
    notes = [line for what, fix in not_run_notes(rows, not_run)
             for line in (f"Not run: {what}.", f"To run them: `{fix}`", "")]
    lines = ["# Claims report", "", summary(rows), "", *notes,
             "Each claim of the thesis is checked on this run's CSVs (configs/claims/).", ""]
    for chapter in sorted({r["chapter"] for r in rows}):
        lines += [f"## Chapter {chapter}", "", "| claim | item | status | measured | requirement | thesis |",
                  "|---|---|---|---|---|---|"]
        for r in (r for r in rows if r["chapter"] == chapter):
            cells = [r["id"], r["item"], _status_text(r), r["measured"], r["detail"],
                     f"T{r['thesis_line']}: “{r['quote']}”"]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _html_reason(row: dict) -> str:
    if row["status"] != FAIL:
        return ""
    text = f"known at this scale: {row['known_reason']}" if row["known_reason"] else "unexpected"
    return f"<br><small>{html.escape(text)}</small>"


def _html(rows: list[dict], not_run: dict[str, dict] | None = None) -> str:
    colour = {PASS: "#1a7f37", FAIL: "#cf222e", NOT_RUN: "#6e7781"}
    body = [f"<h1>Claims report</h1><p>{html.escape(summary(rows))}</p>"]
    body += [f"<p>Not run: {html.escape(what)}. To run them: <code>{html.escape(fix)}</code></p>"
             for what, fix in not_run_notes(rows, not_run)]
    for chapter in sorted({r["chapter"] for r in rows}):
        body.append(f"<h2>Chapter {chapter}</h2><table><tr><th>claim</th><th>item</th><th>status</th>"
                    "<th>measured</th><th>requirement</th><th>thesis</th></tr>")
        for r in (r for r in rows if r["chapter"] == chapter):
            body.append(
                f"<tr><td>{html.escape(r['id'])}</td><td>{html.escape(r['item'])}</td>"
                f"<td><span style='color:{colour[r['status']]};font-weight:bold'>{r['status'].upper()}</span>"
                f"{_html_reason(r)}</td>"
                f"<td>{html.escape(r['measured'])}</td><td>{html.escape(r['detail'])}</td>"
                f"<td>T{r['thesis_line']}: “{html.escape(r['quote'])}”</td></tr>")
        body.append("</table>")
    style = ("body{font-family:sans-serif;max-width:70em;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px;vertical-align:top;font-size:90%}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Claims report</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_report(rows: list[dict], csv_path: Path, md_path: Path, html_path: Path,
                 not_run: dict[str, dict] | None = None) -> None:
    write_csv(csv_path, REPORT_COLUMNS, rows)
    atomic_write_text(md_path, _markdown(rows, not_run))
    atomic_write_text(html_path, _html(rows, not_run))
