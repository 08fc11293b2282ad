#!/usr/bin/env python3
"""Per-file and total mutation scores from Stryker.NET JSON reports (StrykerOutput/<time>/reports/mutation-report.json).

usage: python3 .ci/mutation-score.py REPORT.json [REPORT.json ...]

A run with -m reports every file of the project but tests only the files it was given; the others' mutants are
"Ignored" (removed by the mutate filter), so a file counts for a report only when some mutant of it is not. When
several reports cover a file, the last one given wins: pass the reports oldest first to get the latest run of each
file. Score = (killed + timeout) / (killed + timeout + survived + no coverage); compile errors and ignored mutants do
not count; timeouts are also shown apart (the score without them).
"""
import collections
import json
import re
import sys

per_file = {}
for report in sys.argv[1:]:
    with open(report, encoding="utf-8") as f:
        data = json.load(f)
    for path, entry in data["files"].items():
        mutants = entry["mutants"]
        if all(m["status"] == "Ignored" and "mutate filter" in (m.get("statusReason") or "") for m in mutants):
            continue
        per_file[re.sub(r".*/src/[^/]+/", "", path)] = collections.Counter(m["status"] for m in mutants)

STATUSES = ("Killed", "Timeout", "Survived", "NoCoverage", "CompileError", "Ignored")


def score(c):
    counted = c["Killed"] + c["Timeout"] + c["Survived"] + c["NoCoverage"]
    return f"{100 * (c['Killed'] + c['Timeout']) / counted:5.1f} %" if counted else "   n/a"


total = collections.Counter()
print(f"{'file':55} {'score':>7}  killed timeout survived nocov compile-error ignored")
for name in sorted(per_file):
    c = per_file[name]
    total.update(c)
    print(f"{name:55} {score(c):>7}  " + " ".join(f"{c[s]:>{len(s) if len(s) > 5 else 5}}" for s in STATUSES))
counted = total["Killed"] + total["Timeout"] + total["Survived"] + total["NoCoverage"]
print(f"{'total (' + str(len(per_file)) + ' files)':55} {score(total):>7}  " + " ".join(f"{total[s]:>5}" for s in STATUSES))
if counted:
    print(f"without timeouts: {100 * total['Killed'] / counted:.1f} %")
