#!/usr/bin/env python3
"""Compare model.py outputs row by row: python3 cmp_rows.py A.txt [B.txt].
One file: the rows off by > 20% (overlap). Two: the counts of each and the
rows that cross 20% between them."""
import sys


def rows(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 12 and f[1] in ('seq', 'int'):
            try:
                out[tuple(f[:5])] = (float(f[5]), float(f[8]), float(f[9]), f[10])
            except ValueError:
                pass
    return out


def group(k):
    if not k[0].startswith(('syn', 'copy+syn')):
        return 'real'
    return 'twins' if 'o110' in k[0] else 'sweep'


def counts(r):
    c = {'all': [0, 0], 'real': [0, 0], 'twins': [0, 0], 'sweep': [0, 0]}
    for k, v in r.items():
        for g in ('all', group(k)):
            c[g][1] += 1
            c[g][0] += abs(v[2]) <= 20
    return ' '.join('%s %d/%d' % (g, *c[g]) for g in c)


a = rows(sys.argv[1])
print(sys.argv[1], counts(a))
if len(sys.argv) == 2:
    for k, v in sorted(a.items()):
        if abs(v[2]) > 20:
            print('  %-34s %-4s %-6s %5s %-5s meas %.3f pred %.3f %+6.1f %s' % (*k, *v))
    sys.exit()
b = rows(sys.argv[2])
print(sys.argv[2], counts(b))
for k in sorted(set(a) | set(b)):
    x, y = a.get(k), b.get(k)
    if not x or not y:
        continue
    ia, ib = abs(x[2]) <= 20, abs(y[2]) <= 20
    if ia != ib:
        print('  %s %-34s %-4s %-6s %5s %-5s meas %.3f  %+6.1f %-8s -> %+6.1f %s' % (
            'GAIN' if ib else 'LOSS', *k, x[0], x[2], x[3], y[2], y[3]))
