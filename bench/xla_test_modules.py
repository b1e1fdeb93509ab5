#!/usr/bin/env python3
"""xla_test_modules.py - pull the HLO modules out of XLA's C++ test files.

Usage: xla_test_modules.py SRC OUT
  SRC  a folder (searched recursively for *.cc) or a single .cc file:
       XLA's own tests (xla/tests/*_test.cc, xla/service/cpu/tests/, ...)
  OUT  a folder; one file per module is written there, named
       <file stem>.<TestName or line>.hlo (".2", ".3" when a test holds
       several), and a line per module is printed:
       "<out file><TAB><source file>:<line>"

XLA's tests keep their modules in C++ raw string literals, R"(...)" or
R"delim(...)delim", usually `constexpr absl::string_view kHloText = R"(`.
A literal counts as a module when its text holds an `ENTRY` computation
or, as XLA's parser also takes (the last computation is the entry), a
computation `name {` with instructions, so the many small strings of a
test (pattern matchers, FileCheck patterns) are skipped; a literal built as `absl::StrCat(kPrefix, R"(...)")`
gets the text of the constant kPrefix (a raw string of shared
computations) in front, as the test does.
Templates are left alone: a literal handed to absl::StrFormat,
absl::Substitute or StrReplaceAll (directly or through its constant's
name), whose holes the test fills at run time, is skipped and counted,
since its text is not a module until the test fills it. Nothing is rewritten: the module is written as the test holds it, so
what trench and XLA's parser are handed is XLA's own test input.
"""
import os
import re
import sys

RAW = re.compile(r'R"([^()\\ \t\n]{0,16})\(')
# The test name may be wrapped in macros: DISABLED_ON_GPU(Multioutput).
TEST = re.compile(r'\b(?:TEST|TEST_F|TEST_P|XLA_TEST_F|XLA_TEST_P|'
                  r'XLA_TYPED_TEST|TYPED_TEST)\s*\(\s*\w+\s*,\s*'
                  r'(?:\w+\s*\(\s*)*(\w+)\s*\)')
FILLER = re.compile(r'(?:StrFormat|Substitute|StrReplaceAll|Printf)\s*\(\s*$')


NAMED = re.compile(r'(\w+)\s*(?:\[\])?\s*=\s*$')
STRCAT = re.compile(r'StrCat\(\s*(\w+)\s*,\s*$')


def literals(text):
    """Yields (offset of the literal's body, body) for each raw string.
    A literal named by a constant (`kScalarOps = R"(`) is remembered; a
    literal that follows it in `absl::StrCat(kScalarOps, R"(` gets its
    text in front, as the test builds its module."""
    named = {}
    pos = 0
    while True:
        m = RAW.search(text, pos)
        if not m:
            return
        end_tok = ")" + m.group(1) + '"'
        start = m.end()
        end = text.find(end_tok, start)
        if end < 0:
            return
        body = text[start:end]
        before = text[max(0, m.start() - 200):m.start()]
        n = NAMED.search(before)
        if n:
            named[n.group(1)] = body
        c = STRCAT.search(before)
        if c and c.group(1) in named:
            body = named[c.group(1)] + body
        templ = bool(FILLER.search(before))
        yield start, body, n.group(1) if n else None, templ
        pos = end + len(end_tok)


COMP = re.compile(r'^\s*(?:ENTRY\s+)?%?[\w.-]+\s*(?:\([^)]*\)\s*->\s*[^{]*)?\{\s*$', re.M)
INSTR = re.compile(r'^\s*(?:ROOT\s+)?%?[\w.-]+\s*=\s*\S.*\w[\w-]*\(', re.M)


def is_module(body):
    """An ENTRY computation, or (XLA's parser takes the last computation as
    the entry) a computation header `name {` with instructions in it."""
    if re.search(r'^\s*//\s*CHECK', body, re.M):
        return False
    if re.search(r'^\s*ENTRY\b', body, re.M):
        return True
    return bool(COMP.search(body) and INSTR.search(body))


def extract(path, out, seen, stats):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    stem = os.path.basename(path)
    stem = stem[:-3] if stem.endswith(".cc") else stem
    tests = [(m.start(), m.group(1)) for m in TEST.finditer(text)]
    # Constants other literals are StrCat'ed onto are shared computations,
    # not modules of their own.
    prefixes = set(re.findall(r'StrCat\(\s*(\w+)\s*,', text))
    for off, body, const, templ in literals(text):
        if const in prefixes or not is_module(body):
            continue
        if templ or (const and re.search(r'(?:StrFormat|Substitute)\(\s*' + const + r'\b', text)):
            stats["templates"] += 1
            continue
        line = text.count("\n", 0, off) + 1
        name = None
        for toff, tname in tests:
            if toff < off:
                name = tname
        # A literal before the first test (a shared kHloText) is named by
        # its line.
        base = f"{stem}.{name or 'L%d' % line}"
        n = seen.get(base, 0) + 1
        seen[base] = n
        fname = base + (f".{n}" if n > 1 else "") + ".hlo"
        with open(os.path.join(out, fname), "w", encoding="utf-8") as g:
            g.write(body.strip("\n") + "\n")
        stats["modules"] += 1
        print(f"{os.path.join(out, fname)}\t{path}:{line}")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    files = []
    if os.path.isdir(src):
        for root, _, names in os.walk(src):
            files += [os.path.join(root, n) for n in names if n.endswith(".cc")]
    elif os.path.isfile(src):
        files = [src]
    else:
        print(f"{argv[0]}: no such file or folder: {src}", file=sys.stderr)
        return 2
    seen, stats = {}, {"modules": 0, "templates": 0}
    for p in sorted(files):
        extract(p, out, seen, stats)
    print(f"# {len(files)} files, {stats['modules']} modules, "
          f"{stats['templates']} templates skipped", file=sys.stderr)
    return 0 if stats["modules"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
