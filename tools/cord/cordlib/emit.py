# SPDX-License-Identifier: BSD-2-Clause
"""Write an order for a linker.

  ld     GNU ld / lld linker script: an output section `.text.cord` INSERTed
         BEFORE .text, listing one input-section statement per function in
         order.  A static is selected by object file *and* section, so two
         `static step()` are placed independently.  Use with -Wl,-T,FILE.
  lld    lld --symbol-ordering-file: one symbol a line.  lld gives every
         symbol of that name the same priority, so same-named statics move
         together (verify --by-name knows).
  gold   gold --section-ordering-file: one input section name a line; again
         by name only.

All three need the program compiled with -ffunction-sections, or the
linker sees one .text per object and can move nothing (verify then fails).
"""

import os

from .elf import ElfFunctions
from .profile import fmt_key

# Where gcc and clang put a function `f` under -ffunction-sections: the
# prefixes come from hot/cold attributes, profile feedback, and gcc's
# placing of main and constructors in .text.startup.
_PREFIXES = ('.text.', '.text.hot.', '.text.startup.', '.text.unlikely.', '.text.exit.')


def guess_sections(name):
    if name.endswith('.cold'):
        # gcc's split-off cold part `f.cold` lives in .text.unlikely.f.
        return ['.text.unlikely.' + name[:-5]]
    return [p + name for p in _PREFIXES]


class ObjectIndex:
    """Where each function came from: object file and exact section."""

    def __init__(self, paths):
        self._sections = None
        self.elfs = []
        for p in paths:
            if os.path.isdir(p):
                for root, _dirs, files in os.walk(p):
                    for f in sorted(files):
                        if f.endswith(('.o', '.a')):
                            self.elfs.append(ElfFunctions(os.path.join(root, f)))
            else:
                self.elfs.append(ElfFunctions(p))

    def lookup(self, key, warn=None):
        src, name = key
        hits = []
        for e in self.elfs:
            for f in e.lookup(name, src):
                # Without -ffunction-sections the function shares .text with
                # its whole object: selecting that would move everything.
                if f.section.startswith('.text.'):
                    hits.append(f)
                elif warn:
                    warn(f'{fmt_key(key)}: {f.obj} has it in {f.section or "?"}, '
                         'not its own section (compiled without -ffunction-sections?)')
        # The same object reached twice -- as a file and as the member of
        # an archive built from it -- is one function: one pattern.
        # The loose object's pattern (`*m.o`) is kept: GNU ld and lld match
        # it against the archive member too.
        seen, out = {}, []
        for f in hits:
            k = (member_name(f.obj), f.section, f.name, f.local)
            if k not in seen:
                seen[k] = len(out)
                out.append(f)
            elif is_member(out[seen[k]].obj) and not is_member(f.obj):
                out[seen[k]] = f
        return out

    def section_owners(self, section):
        """The distinct objects (by member name) with a section of this name."""
        if self._sections is None:
            self._sections = {}
            for e in self.elfs:
                for f in e.funcs:
                    self._sections.setdefault(f.section, set()).add(member_name(f.obj))
        return self._sections.get(section, set())


def is_member(obj):
    return obj.endswith(')') and '(' in obj


def member_name(obj):
    """The object's own file name: "m.o" for "dir/libx.a(m.o)" and "dir/m.o"."""
    if is_member(obj):
        return obj[:-1].split('(', 1)[1]
    return os.path.basename(obj)


def object_pattern(obj):
    """A linker-script file pattern for an object as readelf names it.
    Archive members ("dir/libx.a(m.o)") use the `archive:member` form both
    GNU ld and lld accept.  A plain object gets a leading `*` so that it
    matches whatever directory the link line names it with -- and because
    GNU ld *loads* a file named in a script without a wildcard, which would
    define everything twice.  Both linkers also match `*m.o` against an
    archive member named m.o.  (XXX: `*x.c.o` also matches `ax.c.o`.)"""
    if is_member(obj):
        ar, member = obj[:-1].split('(', 1)
        return f'*{os.path.basename(ar)}:{member}'
    return f'*{os.path.basename(obj)}'


def _script_entry(key, objects, template, warn):
    src, name = key
    if objects is not None:
        found = objects.lookup(key, warn)
        if not found:
            warn(f'{fmt_key(key)}: in no object given with --objects with a section '
                 'of its own; left out')
            return []
        out = []
        for f in found:
            # A global's section name is enough when no other object has a
            # section of that name (a same-named static elsewhere, or a
            # hidden function of a library beside a program's static).
            if not f.local and len(objects.section_owners(f.section)) <= 1:
                line = f'    *({f.section})'
            else:
                line = f'    {object_pattern(f.obj)}({f.section})'
            if line not in out:
                out.append(line)
        return out
    secs = ' '.join(guess_sections(name))
    if src:
        base = os.path.basename(src)
        obj = template.format(src=base, stem=os.path.splitext(base)[0])
        return [f'    *{obj}({secs})']
    return [f'    *({secs})']


def emit_ld(order, objects=None, template='{src}.o', warn=print, comment='',
            offsets=None, align=None):
    """The GNU ld / lld script.  With offsets ({key: bytes}, place.py), each
    function is preceded by `. = MAX(., origin + OFFSET)` and the region
    aligned to `align` (a cache line), so that the functions land in the
    cache sets planned relative to each other; MAX keeps a function that came out larger than planned from
    moving the location counter backwards (the rest then still keep their
    sets)."""
    head = '  .text.cord :' + (f' ALIGN({align})' if align else '')
    lines = ['/* Generated by cachenet tools/cord: ' + comment + ' */',
             '/* Hot functions in profile order, ahead of the rest of .text. */',
             'SECTIONS', '{', head, '  {']
    if offsets:
        lines.append('    HIDDEN(__cord_origin = .);')
    seen = set()
    for key in order:
        lines.append(f'    /* {fmt_key(key)} */')
        if offsets and offsets.get(key):
            lines.append(f'    . = MAX(., __cord_origin + {offsets[key]:#x});')
        for x in _script_entry(key, objects, template, warn):
            if x not in seen:
                seen.add(x)
                lines.append(x)
    lines += ['  }', '}', 'INSERT BEFORE .text;', '']
    return '\n'.join(lines)


def emit_lld(order, comment=''):
    seen, lines = set(), []
    for _src, name in order:
        if name not in seen:        # same-named statics share one line
            seen.add(name)
            lines.append(name)
    return '\n'.join(lines) + '\n'


def emit_gold(order, objects=None, comment=''):
    seen, lines = set(), []
    for key in order:
        secs = None
        if objects is not None:
            found = objects.lookup(key)
            if found:
                secs = [f.section for f in found]
        for s in secs or guess_sections(key[1]):
            if s not in seen:
                seen.add(s)
                lines.append(s)
    return '\n'.join(lines) + '\n'
