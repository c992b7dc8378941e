#!/usr/bin/env python3
"""check_fortran_ref.py GUIDE FORTRAN_DIR [CONSTANTS_INC]
   check_fortran_ref.py --skeleton FORTRAN_DIR

doc/guide.md's Fortran reference against module river itself, so that
the reference cannot drift from the code.

From FORTRAN_DIR/river.F90 and FORTRAN_DIR/*.inc it takes every public
name of module river (its `public ::` statements and `type, public ::`
types): the procedures a user calls (generic interfaces by their
generic name, each specific a form of it), the abstract interfaces a
user implements (river_module_fn, ...) and the derived types; and the
interface of each (its dummy arguments' names, order, type, intent and
whether they are optional; a function's result). From CONSTANTS_INC
(river_constants.inc, generated at build time; a check of the constants
is skipped when it is not given or not there) every public constant.

The guide's section whose heading says "Fortran reference" (to the
next heading of the same level or above) must then
  * mention every public procedure, type and constant;
  * have, for every procedure (and every form of a generic), a list
    item of this shape (continuation lines indented):
        - `river_NAME(a, b, [c], [ierr])` — in: `a` TYPE, `b(:)` TYPE;
          out: `c` TYPE; result: TYPE. What it does ...
    with the arguments in the interface's order, [optional] ones in
    brackets, and after the signature, up to the first ". ", each
    argument but ierr (always integer, optional, intent(out)) under
    its intent (in, out, inout; value for an argument passed by value;
    a dummy procedure counts as in) with its array shape and its type
    as declared (attributes such as allocatable, pointer or target
    after a comma; names in a row share the type after the last of
    them: `a`, `b` integer); a function gives its result's type;
  * have, for every bind(C) type, a list item starting with
    `type(river_NAME)` that names each of its components in backticks;
and neither that section nor any ```fortran block of the guide may name
a river_* procedure, type or RIVER_* constant that module river does
not have (file names such as river_core.inc, and environment
variables such as $RIVER_ROOT, aside).

With --skeleton, print the list items the reference needs (signature
and arguments, no descriptions), for a new procedure's entry.

Exit 0 if all holds; else 1, one line per problem; 2 for bad usage."""
import glob
import os
import re
import sys

INTENTS = ("in", "out", "inout", "value")


# ------------------------------------------------------------ Fortran side

def statements(path):
    """The file's statements: comments dropped, & continuations joined,
    blank ones left out. Fortran's own strings are kept as they are."""
    out, cur = [], ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = strip_comment(raw.rstrip("\n"))
            s = line.strip()
            if cur and s.startswith("&"):
                s = s[1:].lstrip()
            if s.endswith("&"):
                cur += s[:-1] + " "
                continue
            cur += s
            if cur.strip():
                out.append(cur.strip())
            cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


def strip_comment(line):
    """line without its ! comment (a ! inside a string stays)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "!":
            return line[:i]
    return line


def split_top(s):
    """s split at the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for c in s:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


def show_type(t):
    """A type as the reference writes it: character(len=*) is
    character(*), character(len=:) character(:); one blank after each
    comma."""
    t = re.sub(r"\s+", "", t)
    t = re.sub(r"character\(len=([*:])\)", r"character(\1)", t, flags=re.I)
    return t.replace(",", ", ")


def norm_type(t):
    """A type as compared: as show_type writes it, without blanks or
    case."""
    return re.sub(r"\s+", "", show_type(t)).lower()


class Arg:
    """A dummy argument: name, shape ('', '(:)' or '(*)'), type (with
    attributes such as allocatable), intent, optional."""

    def __init__(self, name):
        self.name = name
        self.shape = ""
        self.type = None
        self.intent = None
        self.optional = False


class Proc:
    """An interface body: a procedure, or an abstract interface."""

    def __init__(self, name, args, is_function, result, where):
        self.name = name
        self.args = [Arg(a) for a in args]
        self.is_function = is_function
        self.result_name = result
        self.result_type = None
        self.where = where

    def arg(self, name):
        for a in self.args:
            if a.name == name:
                return a
        return None


PROC_RE = re.compile(
    r"^(?:module\s+)?(?:pure\s+|elemental\s+|recursive\s+)*"
    r"(subroutine|function)\s+(\w+)\s*\(([^)]*)\)\s*(.*)$", re.I)
END_PROC_RE = re.compile(r"^end\s*(subroutine|function)\b", re.I)
TYPE_RE = re.compile(r"^type\s*,\s*(.*?)\s*::\s*(\w+)\s*$", re.I)
END_TYPE_RE = re.compile(r"^end\s*type\b", re.I)
GENERIC_RE = re.compile(r"^interface\s+(\w+)\s*$", re.I)
END_INTERFACE_RE = re.compile(r"^end\s*interface\b", re.I)
MODPROC_RE = re.compile(r"^module\s+procedure\s+(.*)$", re.I)
PUBLIC_RE = re.compile(r"^public\s*::\s*(.*)$", re.I)
DECL_RE = re.compile(r"^(.+?)::\s*(.+)$")


def declare(proc, spec, names):
    """Apply a declaration `spec :: names` to proc's dummies (and its
    result)."""
    items = split_top(spec)
    base, attrs = items[0], [a.strip().lower() for a in items[1:]]
    intent, optional, value, kept = None, False, False, []
    for a in attrs:
        m = re.match(r"intent\s*\(\s*(in|out|inout)\s*\)$", a)
        if m:
            intent = m.group(1)
        elif a == "optional":
            optional = True
        elif a == "value":
            value = True
        else:
            kept.append(a)
    if value:
        intent = "value"
    if base.lower().startswith("procedure") and intent is None:
        intent = "in"
    typ = show_type(",".join([base] + kept))
    for n in split_top(names):
        n = n.split("=")[0].strip()
        m = re.match(r"(\w+)\s*(\(.*\))?$", n)
        if not m:
            continue
        name, shape = m.group(1), re.sub(r"\s+", "", m.group(2) or "")
        if proc.is_function and name.lower() == proc.result_name.lower():
            proc.result_type = typ
            continue
        a = proc.arg(name)
        if a is not None:
            a.type, a.intent, a.optional, a.shape = typ, intent, optional, \
                shape
        # anything else is a local of a bind(C) body; ignored


class Module:
    """What module river's sources declare."""

    def __init__(self):
        self.public = []          # names, in order
        self.procs = {}           # name -> Proc (interface bodies)
        self.abstract = set()     # names of abstract interfaces
        self.generics = {}        # generic -> [specific names]
        self.types = {}           # public type -> (bind_c, [components])
        self.constants = []       # public constants, in order

    def read(self, path):
        where = os.path.basename(path)
        proc, typ, generic, abstract = None, None, None, False
        for s in statements(path):
            low = s.lower()
            if proc is not None:
                if END_PROC_RE.match(s):
                    self.procs[proc.name] = proc
                    if abstract:
                        self.abstract.add(proc.name)
                    proc = None
                    continue
                m = DECL_RE.match(s)
                if m and not low.startswith("import"):
                    declare(proc, m.group(1), m.group(2))
                continue
            if typ is not None:
                if END_TYPE_RE.match(s):
                    typ = None
                    continue
                m = DECL_RE.match(s)
                if m and not low.startswith("private"):
                    for n in split_top(m.group(2)):
                        n = re.match(r"(\w+)", n.split("=")[0].strip())
                        if n:
                            self.types[typ][1].append(n.group(1))
                continue
            if generic is not None:
                if END_INTERFACE_RE.match(s):
                    generic = None
                    continue
                m = MODPROC_RE.match(s)
                if m:
                    self.generics[generic] += split_top(m.group(1))
                continue
            if low.startswith("abstract interface"):
                abstract = True
                continue
            if low == "interface":
                abstract = False
                continue
            if END_INTERFACE_RE.match(s):
                abstract = False
                continue
            m = GENERIC_RE.match(s)
            if m:
                generic = m.group(1)
                self.generics.setdefault(generic, [])
                continue
            m = PUBLIC_RE.match(s)
            if m:
                self.public += split_top(m.group(1))
                continue
            m = TYPE_RE.match(s)
            if m:
                attrs = [a.strip().lower() for a in split_top(m.group(1))]
                if "public" in attrs:
                    typ = m.group(2)
                    bind_c = any(a.replace(" ", "") == "bind(c)"
                                 for a in attrs)
                    self.types[typ] = (bind_c, [])
                    self.public.append(typ)
                else:
                    typ = None
                continue
            m = re.match(r"^(.+?),\s*parameter\s*,\s*public\s*::\s*(\w+)", s,
                         re.I)
            if m:
                self.constants.append(m.group(2))
                continue
            m = PROC_RE.match(s)
            if m:
                kind, name, args, tail = m.groups()
                is_fn = kind.lower() == "function"
                r = re.search(r"result\s*\(\s*(\w+)\s*\)", tail, re.I)
                result = r.group(1) if r else name
                proc = Proc(name, [a.strip() for a in args.split(",")
                                   if a.strip()], is_fn, result, where)

    def forms(self, name):
        """The interface bodies a public procedure name stands for."""
        if name in self.generics:
            return [self.procs[s] for s in self.generics[name]
                    if s in self.procs]
        if name in self.procs:
            return [self.procs[name]]
        return []

    def problems(self):
        """What the sources themselves leave unclear to this script."""
        bad = []
        for n in self.public:
            if n not in self.types and not self.forms(n):
                bad.append("module river: public name %s has no interface "
                           "this script could read" % n)
        for n in self.public:
            for p in self.forms(n):
                for a in p.args:
                    if a.type is None or a.intent is None:
                        bad.append("module river: %s (%s): argument %s has "
                                   "no type or intent this script could "
                                   "read" % (p.name, p.where, a.name))
        return bad


def read_module(fdir, constants=None):
    m = Module()
    files = [os.path.join(fdir, "river.F90")] + sorted(
        f for f in glob.glob(os.path.join(fdir, "*.inc"))
        if os.path.basename(f) != "river_constants.inc")
    for f in files:
        m.read(f)
    if constants:
        m.read(constants)
    return m


# --------------------------------------------------------------- the guide

def signature(name, proc):
    args = ["[%s]" % a.name if a.optional else a.name for a in proc.args]
    return "`%s(%s)`" % (name, ", ".join(args))


def details(proc):
    """The reference's argument text for proc, grouped by intent in the
    order the intents first appear; neighbours of one type share it
    (`a`, `b` integer)."""
    groups = {}
    for a in proc.args:
        if a.name == "ierr":
            continue
        groups.setdefault(a.intent, []).append(a)
    out = []
    for i, args in groups.items():
        items = []
        for k, a in enumerate(args):
            nxt = args[k + 1] if k + 1 < len(args) else None
            name = "`%s%s`" % (a.name, a.shape)
            if nxt is not None and nxt.type == a.type:
                items.append(name)
            else:
                items.append("%s %s" % (name, pretty_type(a.type)))
        out.append("%s: %s" % (i, ", ".join(items)))
    if proc.is_function:
        out.append("result: %s" % pretty_type(proc.result_type))
    return "; ".join(out)


def pretty_type(t):
    return show_type(t) if t else "?"


def skeleton(m):
    for n in m.public:
        if n in m.types:
            bind_c, comps = m.types[n]
            if bind_c:
                print("- `type(%s)` — %s." % (
                    n, ", ".join("`%s`" % c for c in comps)))
            else:
                print("- `type(%s)` — ..." % n)
            continue
        for p in m.forms(n):
            d = details(p)
            print("- %s%s. ..." % (signature(n, p), " — " + d if d else ""))


def section(lines, pattern):
    """(the index of its first line, the lines) of the section whose
    heading matches pattern (to the next heading of its level or
    above), headings inside fenced code aside; None if there is
    none."""
    fence, start, level = False, None, None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        h = re.match(r"^(#+)\s", line)
        if not h:
            continue
        if start is None:
            if re.search(pattern, line, re.I):
                start, level = i, len(h.group(1))
        elif len(h.group(1)) <= level:
            return start, lines[start:i]
    return (start, lines[start:]) if start is not None else None


def fortran_blocks(lines):
    """The lines of the guide's ```fortran blocks."""
    out, on = [], False
    for line in lines:
        if line.startswith("```"):
            on = not on and line[3:].strip().lower() in ("fortran", "f90")
            continue
        if on:
            out.append(line)
    return out


FILE_EXT = r"\.(?:inc|F90|f90|c|h|mod|smod|md|yaml|py|sh)\b"
LOWER_RE = re.compile(r"(?<![\w/.-])(river_[a-z0-9_]*[a-z0-9])(?!\w)(?!%s)"
                      % FILE_EXT)
UPPER_RE = re.compile(r"(?<![\w/.$-])(RIVER_[A-Z0-9_]*[A-Z0-9])(?!\w)")


def entries(sec):
    """The list items of the section that start with a backticked
    signature `river_...(` or `type(river_...)`: (first line number,
    the item's text joined on one line)."""
    out, cur, at = [], None, 0
    for i, line in enumerate(sec):
        if line.startswith("- `"):
            if cur is not None:
                out.append((at, cur))
            cur, at = line[2:].strip(), i
        elif cur is not None and line.startswith(" ") and line.strip():
            cur += " " + line.strip()
        else:
            if cur is not None:
                out.append((at, cur))
            cur = None
    if cur is not None:
        out.append((at, cur))
    return out


SIG_RE = re.compile(r"^`(river_\w+)\(([^`]*)\)`\s*(.*)$")
TYPE_ENTRY_RE = re.compile(r"^`type\((river_\w+)\)`\s*(.*)$")


def parse_entry(text):
    """(name, [(arg, optional)], {arg: (shape, type, intent)}, result
    type or None) of an entry, or None if it is not a procedure's."""
    m = SIG_RE.match(text)
    if not m:
        return None
    name, arglist, rest = m.groups()
    args = []
    for a in [x.strip() for x in arglist.split(",") if x.strip()]:
        opt = a.startswith("[") and a.endswith("]")
        args.append((a.strip("[] "), opt))
    rest = re.sub(r"^[—:–-]+\s*", "", rest.strip())
    if not re.match(r"(in|out|inout|value|result):", rest):
        return name, args, {}, None
    end = re.search(r"\.(\s|$)", rest)
    text = rest[:end.start()] if end else rest
    documented, result = {}, None
    parts = re.split(r"(?:^|;\s*)(in|out|inout|value|result):\s*", text)
    # parts: ['', intent, body, intent, body, ...]
    for intent, body in zip(parts[1::2], parts[2::2]):
        body = body.strip().rstrip(";").strip()
        if intent == "result":
            result = norm_type(body)
            continue
        items = list(re.finditer(r"`(\w+)(\((?:[:*]|\.\.)\))?`", body))
        waiting = []     # names before a shared type: `a`, `b` integer
        for k, it in enumerate(items):
            stop = items[k + 1].start() if k + 1 < len(items) else len(body)
            typ = body[it.end():stop].strip().rstrip(",;").strip()
            waiting.append((it.group(1), it.group(2) or ""))
            if typ or k + 1 == len(items):
                for arg, shape in waiting:
                    documented[arg] = (shape, norm_type(typ), intent)
                waiting = []
    return name, args, documented, result


def compare(proc, entry):
    """The ways entry differs from proc (empty: it matches)."""
    _, args, documented, result = entry
    bad = []
    want = [(a.name, a.optional) for a in proc.args]
    if args != want:
        return ["arguments %s, the interface has %s"
                % (fmt_args(args), fmt_args(want))]
    for a in proc.args:
        d = documented.get(a.name)
        if d is None:
            if a.name != "ierr":
                bad.append("argument %s: no type and intent given" % a.name)
            continue
        shape, typ, intent = d
        if (shape, typ, intent) != (a.shape, norm_type(a.type), a.intent):
            bad.append("argument %s: %s: `%s%s` %s, the interface has "
                       "%s: `%s%s` %s" % (a.name, intent, a.name, shape,
                                          pretty_type(typ), a.intent, a.name,
                                          a.shape, pretty_type(a.type)))
    for n in documented:
        if proc.arg(n) is None:
            bad.append("argument %s: not an argument of it" % n)
    if proc.is_function and result != norm_type(proc.result_type):
        bad.append("result: %s, the interface has %s"
                   % (pretty_type(result) if result else "not given",
                      pretty_type(proc.result_type)))
    if not proc.is_function and result is not None:
        bad.append("a result given, but it is a subroutine")
    return bad


def fmt_args(args):
    return "(%s)" % ", ".join("[%s]" % a if o else a for a, o in args)


def check(guide, m):
    with open(guide, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found = section(lines, r"fortran reference")
    if found is None:
        return ["%s: no section headed \"Fortran reference\"" % guide]
    first, sec = found
    where = "%s, %s" % (guide, sec[0].lstrip("# ").strip())
    text = "\n".join(sec)
    bad = m.problems()

    # Every public name mentioned; every name mentioned real.
    said = set(LOWER_RE.findall(text))
    for n in m.public:
        if n not in said:
            kind = "type" if n in m.types else "procedure"
            bad.append("%s: %s %s is missing" % (where, kind, n))
    for n in m.constants:
        if n not in set(UPPER_RE.findall(text)):
            bad.append("%s: constant %s is missing" % (where, n))
    known = set(m.public)
    scanned = [(where, text),
               ("%s, its ```fortran blocks" % guide,
                "\n".join(fortran_blocks(lines)))]
    for w, t in scanned:
        for n in sorted(set(LOWER_RE.findall(t))):
            if n not in known:
                bad.append("%s: names %s, which module river does not "
                           "have" % (w, n))
        if m.constants:
            for n in sorted(set(UPPER_RE.findall(t))):
                if n not in m.constants:
                    bad.append("%s: names %s, which is no constant of "
                               "module river" % (w, n))

    # Every procedure's forms, each with its entry.
    ents = entries(sec)
    by_name = {}
    for at, e in ents:
        t = TYPE_ENTRY_RE.match(e)
        if t:
            by_name.setdefault(("type", t.group(1)), []).append((at, e))
            continue
        p = parse_entry(e)
        if p:
            by_name.setdefault(p[0], []).append((at, p))
    for n in m.public:
        if n in m.types:
            bind_c, comps = m.types[n]
            items = by_name.get(("type", n), [])
            if not items:
                bad.append("%s: type %s has no entry (- `type(%s)` ...)"
                           % (where, n, n))
            elif bind_c:
                named = set(re.findall(r"`(\w+)`", items[0][1]))
                for c in comps:
                    if c not in named:
                        bad.append("%s: type(%s): component %s is not named"
                                   % (where, n, c))
            continue
        forms = m.forms(n)
        got = by_name.get(n, [])
        if not got:
            bad.append("%s: procedure %s has no entry (- %s ...)"
                       % (where, n, signature(n, forms[0]) if forms else n))
            continue
        left = list(forms)
        for at, e in got:
            here = "%s:%d: %s" % (guide, first + at + 1, n)
            match = [p for p in forms if not compare(p, e)]
            if match and match[0] in left:
                left.remove(match[0])
            elif match:
                bad.append("%s: a second entry for the form %s — %s"
                           % (here, signature(n, match[0]),
                              details(match[0])))
            elif len(forms) == 1:
                for b in compare(forms[0], e):
                    bad.append("%s: %s" % (here, b))
                left = []
            else:
                bad.append("%s: matches no form of the generic %s (%s)"
                           % (here, n, "; ".join(
                               signature(n, p) + " — " + details(p)
                               for p in forms)))
        for p in left:
            bad.append("%s: %s: the form %s — %s (%s) has no entry"
                       % (where, n, signature(n, p), details(p), p.name))
    for key in by_name:
        name = key[1] if isinstance(key, tuple) else key
        if name not in known:
            bad.append("%s: an entry for %s, which module river does not "
                       "have" % (where, name))
    return bad


def main(argv):
    if len(argv) == 3 and argv[1] == "--skeleton":
        skeleton(read_module(argv[2]))
        return 0
    if len(argv) not in (3, 4) or argv[1].startswith("-"):
        print(__doc__)
        return 2
    guide, fdir = argv[1], argv[2]
    constants = argv[3] if len(argv) == 4 else None
    if constants and not os.path.exists(constants):
        print("check_fortran_ref: %s is not there (not built?): the "
              "constants are not checked" % constants)
        constants = None
    m = read_module(fdir, constants)
    bad = check(guide, m)
    for b in bad:
        print("check_fortran_ref: " + b)
    if bad:
        print("check_fortran_ref: %d problem(s)" % len(bad))
        return 1
    nproc = sum(1 for n in m.public if n not in m.types)
    print("check_fortran_ref: %s agrees with module river: %d procedures "
          "and interfaces (%d forms), %d types, %s" % (
              guide, nproc,
              sum(len(m.forms(n)) for n in m.public if n not in m.types),
              len(m.types),
              "%d constants" % len(m.constants) if constants
              else "constants not checked"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
