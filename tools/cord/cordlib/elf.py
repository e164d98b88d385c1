# SPDX-License-Identifier: BSD-2-Clause
"""Function symbols of ELF files, read through binutils' readelf.

We parse `readelf -sSW` rather than the ELF bytes so that the tool stays
standard-library only and handles objects, archives and executables the
same way.  The one fact we need beyond `nm` is which source file a local
(static) symbol belongs to: in .symtab, every compilation unit's locals
follow an STT_FILE symbol naming its source, and globals come after all
locals.  That is what keeps two `static step()` in different files apart.
"""

import os
import re
import subprocess

_SEC_RE = re.compile(r'^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+([0-9a-fA-F]+)\s+'
                     r'([0-9a-fA-F]+)\s+([0-9a-fA-F]+)')
_SYM_RE = re.compile(r'^\s*\d+:\s+([0-9a-fA-F]+)\s+(\d+|0x[0-9a-fA-F]+)\s+(\S+)\s+'
                     r'(\S+)\s+(\S+)\s+(\S+)\s*(.*)$')


class Func:
    """One function symbol.  `src` is the STT_FILE name for locals, '' for
    globals; `obj` is the object file ("lib.a(x.o)" for archive members)."""

    __slots__ = ('name', 'src', 'addr', 'size', 'local', 'section', 'obj')

    def __init__(self, name, src, addr, size, local, section, obj):
        self.name, self.src, self.addr, self.size = name, src, addr, size
        self.local, self.section, self.obj = local, section, obj

    def __repr__(self):
        return f'Func({self.src}:{self.name}@{self.addr:#x}+{self.size})'


class ElfFunctions:
    """Every STT_FUNC (and STT_GNU_IFUNC) defined in a file or archive."""

    def __init__(self, path):
        self.path = path
        self.funcs = []
        self.file_symbols = []      # every STT_FILE name, for the LTO check
        self.lto_ir = False         # holds GCC LTO bytecode (.gnu.lto_* sections)
        self.elf_type = ''
        self.min_load = 0
        self._read()
        self.by_name = {}
        for f in self.funcs:
            self.by_name.setdefault(f.name, []).append(f)

    def _read(self):
        out = subprocess.run(['readelf', '-hlsSW', self.path], check=True,
                             capture_output=True, text=True,
                             env=dict(os.environ, LC_ALL='C')).stdout
        obj = self.path
        sections = {}
        src = ''
        in_symtab = False
        loads = []
        for line in out.splitlines():
            if line.startswith('File: '):
                # Archive member: "File: lib.a(member.o)".
                obj, sections, src, in_symtab = line[6:].strip(), {}, '', False
                continue
            if line.startswith('  Type:') and not self.elf_type:
                self.elf_type = line.split()[1]
                continue
            if line.startswith('  LOAD '):
                loads.append(int(line.split()[2], 16))
                continue
            if line.startswith('Symbol table'):
                # .dynsym duplicates .symtab and has no STT_FILE: skip it.
                in_symtab = "'.symtab'" in line
                src = ''
                continue
            m = _SEC_RE.match(line)
            if m and not in_symtab:
                sections[m.group(1)] = m.group(2)
                if m.group(2).startswith('.gnu.lto_'):
                    self.lto_ir = True
                continue
            if not in_symtab:
                continue
            m = _SYM_RE.match(line)
            if not m:
                continue
            value, size, typ, bind, _vis, ndx, name = m.groups()
            if typ == 'FILE':
                src = name
                self.file_symbols.append(name)
                continue
            if typ not in ('FUNC', 'IFUNC') or ndx in ('UND', 'ABS'):
                continue
            local = bind == 'LOCAL'
            size = int(size, 0)
            self.funcs.append(Func(name, src if local else '', int(value, 16), size,
                                   local, sections.get(ndx, ''), obj))
        if loads:
            self.min_load = min(loads) & ~0xfff

    def lookup(self, name, src=''):
        """The symbols that may be `src:name`.  Returns a list: empty when
        absent, more than one when ambiguous.

        A unique name needs no file, unless it is a static of another file
        (the one asked for may be inlined away).  Among several, a static
        is chosen by its STT_FILE name matching `src` (see same_source); a
        global needs no file, and a file-less key means the global.  A local whose STT_FILE is empty -- what a static link
        makes of a hidden-visibility function from a library, listed after
        an empty STT_FILE entry -- has no file to compare: it stands for
        any file when no candidate matches by file, and for '' (the key
        canonical() gives it) before a same-named static of a known file.
        by_address() resolves names the file cannot decide."""
        cands = self.by_name.get(name, [])
        if not src or len(cands) <= 1 and not (cands and cands[0].local and cands[0].src):
            if len(cands) <= 1:
                return list(cands)
            glob = [f for f in cands if not f.local]
            if len(glob) == 1:
                return glob
            anon = [f for f in cands if f.local and not f.src]
            if len(anon) == 1 and not glob:
                return anon
            return list(cands)
        hit = [f for f in cands if not f.local or same_source(f.src, src)]
        if len(hit) > 1:
            exact = [f for f in hit if f.local and norm_source(f.src) == norm_source(src)]
            hit = exact or hit
        if not hit:
            hit = [f for f in cands if f.local and not f.src]
        return hit

    def by_address(self, addr, name):
        """The function named `name` whose bytes hold `addr` (an address
        in this file's terms), or None."""
        for f in self.by_name.get(name, []):
            if f.addr <= addr < f.addr + max(f.size, 1):
                return f
        return None

    def key(self, f):
        """The key an order uses for f: (STT_FILE, name) for a static,
        ('', name) for a global or a local without a file."""
        return (f.src if f.local else '', f.name)

    def containing(self):
        """Address-sorted (start, end, Func) list for address lookups."""
        spans = [(f.addr, f.addr + max(f.size, 1), f) for f in self.funcs if f.addr]
        spans.sort(key=lambda s: s[0])
        return spans


def norm_source(path):
    return os.path.normpath(path).lstrip('./')


def same_source(a, b):
    """Does STT_FILE name `a` denote profile source path `b`?  Compilers
    record the path as given on the command line ("../src/x.c" under meson,
    "x.c" under make), callgrind records DWARF's full path: compare the
    tails, file name first."""
    if not a or not b:
        return False
    pa = norm_source(a).split('/')
    pb = norm_source(b).split('/')
    pa = [p for p in pa if p not in ('..', '.')]
    pb = [p for p in pb if p not in ('..', '.')]
    n = min(len(pa), len(pb))
    return pa[-n:] == pb[-n:]


def find_containing(spans, addr):
    """Binary search in containing(): the Func whose [start, end) holds addr."""
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid][0] <= addr:
            lo = mid + 1
        else:
            hi = mid
    if lo and spans[lo - 1][0] <= addr < spans[lo - 1][1]:
        return spans[lo - 1][2]
    return None


# Names the compiler gives to clones and split parts.  Outside LTO they are
# ordinary symbols with their own sections and we order them like any
# other; under LTO their numbering is not stable (see lto_problem).
CLONE_RE = re.compile(r'\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)*')


def lto_problem(names, file_symbols=()):
    """A reason to refuse, or None.  An LTO link compiles the program again
    in temporary objects (/tmp/ccXXXX.ltrans0.ltrans.o) and names promoted
    statics `x.lto_priv.N` with N chosen per link: neither an object-file
    pattern nor a symbol name from one link is valid for the next."""
    lto = sorted(n for n in names if '.lto_priv.' in n)
    temp = sorted({f for f in file_symbols
                   if '.ltrans' in f or f == '<artificial>'})
    if lto or temp:
        what = []
        if lto:
            what.append('LTO-private symbols (' + ', '.join(lto[:3]) + ')')
        if temp:
            what.append('LTO temporary objects (' + ', '.join(temp[:3]) + ')')
        return ('the profile or binary comes from an LTO build: ' + ' and '.join(what) +
                '. Their names and objects are made by the link, so an order holds only '
                'for links of the same inputs. Profile and link without LTO (meson '
                '-Db_lto=false), pass --lto=place to place them by section name (verify '
                'checks that the order applied), or --lto=drop to leave them out.')
    return None
