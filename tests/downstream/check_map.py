#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A version map against the shared object it was linked into.

Fails when the map has a wildcard in a global list, when the shared
object exports a name the map does not list (a new public function not
added to the map), when the map lists a name the shared object does not
export (a function removed or renamed, or a typo), or when an exported
name carries another version node than the map gives it.

With --static LIB.a, also fails when the static library defines a global
cn_* function (not cn__*) that the shared object does not export: a new
public function whose name was not added to the map (the version script
makes every unlisted name local, so the shared object alone cannot show
it).

Names matching --absent-ok (a regular expression, repeatable) may be
missing from the shared object: functions built only on some machines
(the x86 instruction-set variants) or with optional dependencies (the
AF_XDP backend).

Usage: check_map.py NM MAP SHARED_OBJECT [--static LIB.a] [--absent-ok REGEX]..."""
import argparse
import re
import subprocess
import sys


def parse_map(text):
    """{name: node} for every global name, plus the wildcard lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    names, wild = {}, []
    for m in re.finditer(r"([A-Za-z0-9_.]+)\s*\{(.*?)\}\s*([A-Za-z0-9_.]*)\s*;", text, flags=re.S):
        node, body = m.group(1), m.group(2)
        scope = "global"
        for tok in re.split(r";", body):
            tok = tok.strip()
            if not tok:
                continue
            m2 = re.match(r"(global|local)\s*:\s*(.*)", tok, flags=re.S)
            if m2:
                scope, tok = m2.group(1), m2.group(2).strip()
                if not tok:
                    continue
            if scope != "global":
                continue
            if re.search(r"[*?\[]", tok):
                wild.append("%s: %s" % (node, tok))
            elif tok in names:
                wild.append("%s listed twice (%s, %s)" % (tok, names[tok], node))
            else:
                names[tok] = node
    return names, wild


def exported(nm, so):
    """{name: node} of the defined dynamic symbols (version nodes left out)."""
    out = subprocess.run([nm, "-D", "--defined-only", so], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] == "A":
            continue
        name, _, node = parts[2].partition("@")
        syms[name] = node.lstrip("@")
    return syms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nm")
    ap.add_argument("map")
    ap.add_argument("so")
    ap.add_argument("--absent-ok", action="append", default=[])
    ap.add_argument("--static")
    a = ap.parse_args()
    with open(a.map) as f:
        listed, wild = parse_map(f.read())
    syms = exported(a.nm, a.so)
    bad = 0
    for w in wild:
        print("map: wildcard or duplicate in a global list: %s" % w)
        bad += 1
    if not listed:
        print("map: no names found in %s" % a.map)
        bad += 1
    for n in sorted(set(syms) - set(listed)):
        print("exported but not in the map: %s (add it to %s, in EXPERIMENTAL if new)" % (n, a.map))
        bad += 1
    absent_ok = [re.compile(r) for r in a.absent_ok]
    skipped = 0
    for n in sorted(set(listed) - set(syms)):
        if any(r.search(n) for r in absent_ok):
            skipped += 1
            continue
        print("in the map but not exported: %s (removed or renamed? fix %s)" % (n, a.map))
        bad += 1
    if a.static:
        out = subprocess.run([a.nm, "--defined-only", a.static], check=True,
                             capture_output=True, text=True).stdout
        public = {p[2] for p in (l.split() for l in out.splitlines())
                  if len(p) == 3 and p[1] == "T" and p[2].startswith("cn_")
                  and not p[2].startswith("cn__")}
        for n in sorted(public - set(syms)):
            print("%s is a global function of %s but not exported: add it to %s "
                  "(EXPERIMENTAL if new), or name it cn__* if internal" % (n, a.static, a.map))
            bad += 1
    for n in sorted(set(listed) & set(syms)):
        if syms[n] != listed[n]:
            print("%s exported in version %s, the map says %s" % (n, syms[n] or "(none)", listed[n]))
            bad += 1
    nodes = {}
    for n in syms:
        nodes[syms[n]] = nodes.get(syms[n], 0) + 1
    print("%s: %d names exported (%s); the map lists %d (%d absent in this build, allowed); %d problems"
          % (a.so, len(syms), ", ".join("%s %d" % kv for kv in sorted(nodes.items())),
             len(listed), skipped, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
