#!/usr/bin/env python3
"""The nonnull attributes (common.h CN_NONNULL) really reach the compiler.

tests/nonnull/null_args.c, compiled with -Werror=nonnull,
 - compiles without a diagnostic when every marked call gets a real
   object, so the calls that pass NULL where the contract accepts it
   (destructors, optional outputs, a zero length) are not marked;
 - fails with -DCN_PASS_NULL with one nonnull error on each line marked
   "nonnull:" and no other error.
Usage: check_nonnull.py SRCDIR BUILDDIR CC [CC ARGS...]
"""
import os
import re
import subprocess
import sys

# gcc: "argument N null where non-null expected"; clang: "null passed to a
# callee that requires a non-null argument". One per call, at its line.
NONNULL = re.compile(r'null_args\.c:(\d+):\d+: error: (argument \d+ null where non-null expected'
                     r'|null passed to a callee that requires a non-null argument)')


def compile_file(cc, src, build, extra):
    path = os.path.join(src, 'tests', 'nonnull', 'null_args.c')
    cmd = cc + ['-std=c11', '-Wall', '-Wextra', '-Werror=nonnull', '-fsyntax-only',
                '-I' + os.path.join(src, 'include'), '-I' + os.path.join(build, 'include')]
    r = subprocess.run(cmd + extra + [path], capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL='C'))
    return r.returncode, r.stdout + r.stderr, path


def main():
    src, build, cc = sys.argv[1], sys.argv[2], sys.argv[3:]
    rc, out, path = compile_file(cc, src, build, [])
    if rc != 0 or out.strip():
        print(out)
        sys.exit('FAIL: without NULLs the file must compile with no diagnostic '
                 '(a call that accepts NULL is marked CN_NONNULL?)')
    rc, out, _ = compile_file(cc, src, build, ['-DCN_PASS_NULL'])
    print(out)
    if rc == 0:
        sys.exit('FAIL: NULL passed to CN_NONNULL parameters compiled')
    with open(path) as f:
        want = [i for i, line in enumerate(f, 1) if 'nonnull: ' in line]
    got = sorted(int(m.group(1)) for m in NONNULL.finditer(out))
    if got != want:
        sys.exit(f'FAIL: nonnull errors on lines {got}, marked lines {want}')
    errors = len(re.findall(r': error: ', out))
    if errors != len(want):
        sys.exit(f'FAIL: {errors} errors, {len(want)} of them nonnull')
    print(f'ok: {len(want)} NULL arguments refused, none where NULL is accepted')


if __name__ == '__main__':
    main()
