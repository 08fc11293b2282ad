#!/usr/bin/env python3
"""Per-file and total numbers from Stryker.NET JSON reports (StrykerOutput/<time>/reports/mutation-report.json).

Usage: python3 .ci/mutation-summary.py REPORT... [--list] [--timeouts]

A file counts only in the reports whose -m filter selected it (a file whose every mutant was "Removed by mutate
filter" is out of that run); when several reports selected a file, the last one given wins. Score =
(killed + timeout) / (killed + timeout + survived + no coverage); compile errors and ignored mutants do not count; the score without timeouts is printed too.
--list prints every survivor and mutant without coverage (--timeouts adds the timeouts).
"""
import json
import sys
from collections import Counter

args = [a for a in sys.argv[1:] if not a.startswith('--')]
files = {}
for path in args:
    report = json.load(open(path, encoding='utf-8'))
    root = report.get('projectRoot', '')
    for name, f in report['files'].items():
        mutants = f['mutants']
        if not mutants or all(m['status'] == 'Ignored' and 'mutate filter' in (m.get('statusReason') or '') for m in mutants):
            continue
        rel = name.replace('\\', '/')
        rel = rel.split('/src/')[-1].split('/', 1)[-1] if '/src/' in rel else rel
        files[rel] = (mutants, path)

def counts(mutants):
    c = Counter(m['status'] for m in mutants)
    filtered = sum(1 for m in mutants if m['status'] == 'Ignored' and 'mutate filter' in (m.get('statusReason') or ''))
    c['Ignored'] -= filtered
    return c

print('| File | Score | killed / timeout / survived / no cov. | compile errors | ignored |')
print('|---|---:|---|---:|---:|')
total = Counter()
for rel in sorted(files):
    c = counts(files[rel][0])
    total.update(c)
    k, t, s, n = c['Killed'], c['Timeout'], c['Survived'], c['NoCoverage']
    d = k + t + s + n
    score = f'{100.0 * (k + t) / d:.1f} %' if d else 'n/a'
    print(f"| `{rel}` | {score} | {k} / {t} / {s} / {n} | {c['CompileError']} | {c['Ignored']} |")
k, t, s, n = total['Killed'], total['Timeout'], total['Survived'], total['NoCoverage']
d = k + t + s + n
print(f"| **total** | **{100.0 * (k + t) / d:.1f} %** | {k} / {t} / {s} / {n} | {total['CompileError']} | {total['Ignored']} |" if d else '| total | n/a |')
if d:
    print(f'without timeouts: {100.0 * k / d:.1f} % ({len(files)} files)')
other = {x: v for x, v in total.items() if x not in ('Killed', 'Timeout', 'Survived', 'NoCoverage', 'CompileError', 'Ignored') and v}
if other:
    print('other statuses:', other)
if '--list' in sys.argv:
    wanted = {'Survived', 'NoCoverage'} | ({'Timeout'} if '--timeouts' in sys.argv else set())
    for rel in sorted(files):
        for m in sorted(files[rel][0], key=lambda m: (m['location']['start']['line'], m['location']['start']['column'])):
            if m['status'] in wanted:
                loc = m['location']['start']
                print(f"{m['status']:10} {rel}:{loc['line']}:{loc['column']} [{m['id']}] {m['mutatorName']}: {(m.get('replacement') or '')[:110]!r}")
