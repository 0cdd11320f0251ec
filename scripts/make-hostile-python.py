#!/usr/bin/env python3
"""Writes tests/fixtures/hostile-python (issue 37): model folders whose shipped Python is built
to exhaust the code judge (SRC006) rather than to pass it: names, attributes and subscripts that
refer to themselves through every string operation the literal evaluator folds, cycles of two and
three names, chains of 10,000 terms, nesting 100,000 parentheses deep, and expansion and padding
bombs that would need gigabytes if evaluated as written.

Each case is one folder holding `config.json` (with `auto_map`, so the code is judged as the
model's code) and `modeling_x.py`. Most cases end in a sink (`exec(...)`, `os.system(...)`): a
bounded judge gives up on the value, never on the call, so the sink must still be reported.
README.md lists every folder with the sink the CLI tests expect (`-` when the case has none).

Nothing written here is run; each file is checked with `ast.parse` where CPython's parser can take
it (it refuses nesting past about 200 levels, which is the point of those cases).

Standard library only. Usage: python3 scripts/make-hostile-python.py [tests/fixtures/hostile-python]
(rewrites every case folder and README.md there; deterministic output).
"""

import ast
import base64
import bz2
import json
import os
import shutil
import sys
import zlib

CASES = []  # (name, sink, what, source)


def case(name, sink, what, source):
    CASES.append((name, sink, what, source))


# ---- self-reference through each string operation, then exec -----------------------------------

SELF = [
    ("self-plain", "x = x", "`x = x`"),
    ("self-parenthesized", "x = ((x))", "`x = ((x))`"),
    ("self-concat", 'x = x + "a"', '`x = x + "a"`'),
    ("self-augmented", 'x = "a"\nx += x', "`x += x` (augmented assignment)"),
    ("self-percent", 'x = "%s" % x', '`"%s" % x`'),
    ("self-percent-tuple", 'x = "%s%s" % (x, "a")', '`"%s%s" % (x, "a")`'),
    ("self-format", 'x = "{}".format(x)', '`"{}".format(x)`'),
    ("self-format-keyword", 'x = "{a}".format(a=x)', '`"{a}".format(a=x)`'),
    ("self-format-receiver", 'x = x.format("a")', "`x.format(...)` (the receiver is the cycle)"),
    ("self-join-list", 'x = "".join([x, "a"])', '`"".join([x, "a"])`'),
    ("self-join-name", 'x = "".join(x)', '`"".join(x)` (the items are the cycle)'),
    ("self-join-separator", 'x = x.join(["a", "b"])', "`x.join([...])` (the separator is the cycle)"),
    ("self-strip", 'x = (x + "a").strip()', '`(x + "a").strip()`'),
    ("self-lower", "x = x.lower()", "`x.lower()`"),
    ("self-upper", "x = x.upper()", "`x.upper()`"),
    ("self-lstrip-rstrip", "x = x.lstrip().rstrip()", "`x.lstrip().rstrip()`"),
    ("self-title-capitalize-swapcase", "x = x.title().capitalize().swapcase()",
     "`x.title().capitalize().swapcase()`"),
    ("self-replace-receiver", 'x = x.replace("a", "b")', '`x.replace("a", "b")`'),
    ("self-replace-argument", 'x = "abc".replace("a", x)', '`"abc".replace("a", x)`'),
    ("self-fstring", 'x = f"{x.upper()}"', '`f"{x.upper()}"`'),
    ("self-fstring-plain", 'x = f"a{x}b"', '`f"a{x}b"`'),
    ("self-fstring-nested", "x = f\"{f'{x}'}\"", "an f-string inside an f-string"),
    ("self-slice-reverse", "x = x[::-1]", "`x[::-1]`"),
    ("self-slice", "x = x[1:]", "`x[1:]`"),
    ("self-index", "x = x[0] + x", "`x[0] + x`"),
    ("self-multiply", "x = x * 2", "`x * 2`"),
    ("self-multiply-left", "x = 2 * x", "`2 * x`"),
    ("self-encode-decode", "x = x.encode().decode()", "`x.encode().decode()`"),
    ("self-decode-codec", 'x = x.decode("rot13")', '`x.decode("rot13")`'),
    ("self-base64", "import base64\nx = base64.b64decode(x)", "`base64.b64decode(x)`"),
    ("self-base64-percent", 'import base64\nx = base64.b64decode("%s" % x)',
     '`base64.b64decode("%s" % x)`: the decoder re-enters the string evaluator'),
    ("self-codecs", 'import codecs\nx = codecs.decode(x, "rot13")', '`codecs.decode(x, "rot13")`'),
    ("self-codecs-zlib", 'import codecs\nx = codecs.decode(x, "zlib")', '`codecs.decode(x, "zlib")`'),
    ("self-zlib", "import zlib\nx = zlib.decompress(x)", "`zlib.decompress(x)`"),
    ("self-bytes", 'x = bytes(x, "utf-8")', '`bytes(x, "utf-8")`'),
    ("self-bytes-list", "x = bytes([x])", "`bytes([x])`"),
    ("self-bytearray", "x = bytearray(x)", "`bytearray(x)`"),
    ("self-chr", "x = chr(x)", "`chr(x)`"),
    ("self-str", "x = str(x)", "`str(x)`"),
    ("self-map-chr", 'x = "".join(map(chr, x))', '`"".join(map(chr, x))`'),
    ("self-generator", 'x = "".join(chr(c) for c in x)', '`"".join(chr(c) for c in x)`'),
    ("self-conditional", 'x = x if x else "a"', '`x = x if x else "a"`'),
    ("self-conditional-method", 'x = ("a" if y else x).strip()\ny = 1', '`("a" if y else x).strip()`'),
    ("self-walrus", 'y = (x := x + "a")\nx = y', "`y = (x := x + \"a\")` then `x = y`"),
    ("self-tuple-unpack", 'x, y = y, x + "a"', '`x, y = y, x + "a"`'),
    ("self-every-operation",
     'x = f"{(\'%s\' % \'{}\'.format(\'\'.join([x, \'a\'])).strip().replace(\'a\', \'b\')).upper()}"[::-1] * 2',
     "all of them in one expression"),
]
for name, body, what in SELF:
    case(name, "exec", f"{what}, then `exec(x)`", f"{body}\nexec(x)\n")

# ---- cycles of two and three names, attributes, subscripts ------------------------------------

case("cycle-two", "exec", "`a = b.strip()` / `b = a.lower()` / `exec(a)`",
     "a = b.strip()\nb = a.lower()\nexec(a)\n")
case("cycle-two-format-join", "exec", '`a = "{}".format(b)` / `b = "".join([a, "x"])`',
     'a = "{}".format(b)\nb = "".join([a, "x"])\nexec(a)\n')
case("cycle-three", "exec", "`a` from `b` from `c` from `a` through `+`, `strip` and `%`",
     'a = b + "x"\nb = c.strip()\nc = "%s" % a\nexec(a)\n')
case("cycle-three-decoders", "exec", "a cycle through `base64`, `codecs` and `bytes.decode`",
     'import base64, codecs\na = base64.b64decode(b)\nb = codecs.decode(c, "rot13")\nc = a.decode()\nexec(a)\n')
case("cycle-across-functions", "exec", "the cycle spans module level and a function body",
     'a = b + "x"\n\n\ndef f():\n    global b\n    b = a.strip()\n    exec(a)\n\n\nexec(b)\n')
case("self-attribute", "exec", "`self.x = self.y.strip()` / `self.y = self.x + \"a\"` / `exec(self.x)`",
     'class XModel:\n    def __init__(self):\n        self.x = self.y.strip()\n        self.y = self.x + "a"\n        exec(self.x)\n')
case("self-attribute-direct", "exec", "`self.x = \"%s\" % self.x`",
     'class XModel:\n    def forward(self):\n        self.x = "%s" % self.x\n        exec(self.x)\n')
case("class-attribute", "exec", "class attributes `a = \"%s\" % b` / `b = a.lower()`, `exec(C.a)`",
     'class C:\n    a = "%s" % b\n    b = a.lower()\n\n\nexec(C.a)\n')
case("class-attribute-qualified", "exec", "`C.x = C.x + \"a\"`",
     'class C:\n    x = "a"\n\n\nC.x = C.x + "a"\nexec(C.x)\n')
case("module-attribute-cycle", "exec", "`cfg.a = cfg.b.strip()` / `cfg.b = cfg.a + \"x\"`",
     'import types\ncfg = types.SimpleNamespace()\ncfg.a = cfg.b.strip()\ncfg.b = cfg.a + "x"\nexec(cfg.a)\n')
case("subscript-self", "exec", '`cfg["k"] = cfg["k"].strip()`',
     'cfg = {}\ncfg["k"] = cfg["k"].strip()\nexec(cfg["k"])\n')
case("subscript-dict-literal", "exec", '`cfg = {"k": cfg["k"] + "a"}`',
     'cfg = {"k": cfg["k"] + "a"}\nexec(cfg["k"])\n')
case("subscript-cycle", "exec", '`a["k"] = b["k"]` / `b["k"] = "%s" % a["k"]`',
     'a, b = {}, {}\na["k"] = b["k"]\nb["k"] = "%s" % a["k"]\nexec(a["k"])\n')
case("conditional-cycle", "exec", "`a = b if b else \"x\"` / `b = a.strip() if a else a`",
     'a = b if b else "x"\nb = a.strip() if a else a\nexec(a)\n')
case("getattr-self-name", "os.system", "`n = n + \"tem\"` then `getattr(os, n)(...)` beside `os.system`",
     'import os\nn = n + "tem"\ngetattr(os, n)("id")\nos.system(n)\n')
case("getattr-cycle", "os.system", "`f = getattr(os, g)` / `g = f.__name__`",
     'import os\nf = getattr(os, g)\ng = f.__name__ + "x"\nf("id")\nos.system(g)\n')
case("import-self-name", "exec", "`m = __import__(m)` / `m.system(...)`",
     'm = __import__(m)\nm.system("id")\nexec(m)\n')
case("import-cycle", "exec", "`a = __import__(b).x` / `b = a + \"s\"`",
     'a = __import__(b).x\nb = a + "s"\nexec(b)\n')
case("alias-cycle", "os.system", "`from os import system as s` then `s = t` / `t = s`",
     'import os\nfrom os import system as s\ns = t\nt = s\ns("id")\nos.system("id")\n')
case("default-argument-self", "exec", "`def f(x=f): exec(x)`",
     "def f(x=f):\n    exec(x)\n\n\nexec(f)\n")

# ---- long chains (linear cost expected) --------------------------------------------------------

N = 10_000
case("chain-chr-10000", "os.system", "`os.system(chr(97)+chr(97)+...)`, 10,000 terms",
     "import os\nos.system(" + "+".join(["chr(97)"] * N) + ")\n")
case("chain-strings-10000", "exec", '`exec("a"+"a"+...)`, 10,000 terms',
     "exec(" + "+".join(['"a"'] * N) + ")\n")
case("chain-names-10000", "exec", '`a1 = a0 + "a"` ... `a10000`, then `exec(a10000)`',
     'a0="a"\n' + "".join(f'a{i}=a{i - 1}+"a"\n' for i in range(1, N + 1)) + f"exec(a{N})\n")
case("chain-names-two-uses-30", "exec",
     '`a1 = a0 + a0` ... 30 lines: each name used twice (2^30 paths if not memoised; 1 GiB value)',
     'a0 = "a"\n' + "".join(f"a{i} = a{i - 1} + a{i - 1}\n" for i in range(1, 31)) + "exec(a30)\n")
case("chain-augmented-10000", "exec", '`x += "a"` 10,000 times, then `exec(x)`',
     'x = "a"\n' + 'x+="a"\n' * N + "exec(x)\n")
case("chain-percent-3000", "exec", '`"%s" % ("%s" % (...))` nested 3,000 times',
     "exec(" + '"%s" % (' * 3000 + '"a"' + ")" * 3000 + ")\n")
case("chain-methods-5000", "exec", '`"a".strip().strip()...` 5,000 calls',
     'exec("a"' + ".strip()" * 5000 + ")\n")
case("chain-right-nested-10000", "exec", '`"a" + ("a" + (...))`, 10,000 levels',
     "exec(" + '"a"+(' * N + '"a"' + ")" * N + ")\n")

# ---- deep nesting ----------------------------------------------------------------------------

case("nesting-parentheses-100000", "exec", "`x = ((((...1...))))`, 100,000 deep, then `exec(x)`",
     "x = " + "(" * 100_000 + '"a"' + ")" * 100_000 + "\nexec(x)\n")
case("nesting-lists-50000", "os.system", "`x = [[[[...]]]]`, 50,000 deep, then `os.system(x)`",
     "import os\nx = " + "[" * 50_000 + "]" * 50_000 + "\nos.system(x)\n")
case("nesting-calls-5000", "os.system", "`os.system(str(str(...)))`, 5,000 nested calls",
     "import os\nos.system(" + "str(" * 5000 + '"id"' + ")" * 5000 + ")\n")
case("nesting-decoders-5000", "exec", "`exec(d(d(...)))` with `from base64 import b64decode as d`, 5,000 deep",
     "from base64 import b64decode as d\nexec(" + "d(" * 5000 + '"aWQ="' + ")" * 5000 + ")\n")
case("nesting-unary-50000", "exec", "`x = - - - ... 1`, 50,000 operators, then `exec(x)`",
     "x = " + "-" * 50_000 + "1\nexec(x)\n")
# tree-sitter-python's scanner keeps at most 255 open string delimiters, so f-strings nested
# deeper misparse with no syntax error. CPython refuses the 150th nested f-string (3.12+), and the
# judge blanks every f-string from that level on (a value computed at run time): the sink stays.
case("nesting-fstrings-1000", "exec", "f-strings nested 1,000 deep (Python 3.12 syntax; CPython refuses 150 levels)",
     "exec(" + 'f"{' * 1000 + '"a"' + '}"' * 1000 + ")\n")
case("nesting-fstrings-149", "exec", "f-strings nested 149 deep, the most CPython 3.12 accepts",
     "exec(" + 'f"{' * 149 + '"a"' + '}"' * 149 + ")\n")
case("nesting-fstrings-300-multiline", "os.system",
     "triple-quoted f-strings nested 300 deep across lines, with specs and `!r`",
     "import os\nos.system(" + "f\"\"\"{\n" * 300 + "'a'!r:>{w}" + "\n}\"\"\"" * 300 + ")\n")
case("nesting-subscripts-10000", "exec", "`x[0][0][0]...`, 10,000 subscripts",
     'x = "a"\nexec(x' + "[0]" * 10_000 + ")\n")
case("nesting-attributes-20000", "exec", "`x.a.a.a...`, 20,000 attributes",
     'x = "a"\nexec(x' + ".a" * 20_000 + ")\n")
case("nesting-lambdas-2000", "exec", "`lambda: lambda: ...`, 2,000 deep",
     "exec(" + "lambda: " * 2000 + '"a")\n')
case("nesting-blocks-300", "os.system", "`if 1:` blocks nested 300 deep around `os.system`",
     "import os\n" + "".join(" " * i + "if 1:\n" for i in range(300)) + " " * 300 + 'os.system("id")\n')

# ---- expansion bombs (a bounded judge sizes them before it allocates) ------------------------

REPLACE = 's0 = "aaaaaaaaaa"\n'
for lines in (7, 11):
    src = REPLACE + "".join(f's{i} = s{i - 1}.replace("a", s{i - 1})\n' for i in range(1, lines + 1))
    case(f"bomb-replace-{lines}", "exec",
         f'`s = s.replace("a", s)` chained {lines} lines (10^{2 ** lines} bytes as written)',
         src + f"exec(s{lines})\n")
case("bomb-join-chain", "exec", "`t = s.join(s)` chained 8 lines (squares each time)",
     's0 = "ab"\n' + "".join(f"s{i} = s{i - 1}.join(s{i - 1})\n" for i in range(1, 9)) + "exec(s8)\n")
case("bomb-concat-doubling-40", "exec", "`s = s + s` 40 lines (a terabyte)",
     's = "a"\n' + "s = s + s\n" * 40 + "exec(s)\n")
case("bomb-multiply", "exec", '`"a" * 10**9`', 'x = "a" * 10**9\nexec(x)\n')
case("bomb-multiply-literal", "exec", '`"ab" * 999999999999`', 'x = "ab" * 999999999999\nexec(x)\n')
case("bomb-multiply-power", "exec", '`"a" * 10**10**10` (the exponent itself is a bomb)',
     'x = "a" * 10**10**10\nexec(x)\n')
case("bomb-multiply-chain", "exec", '`"a" * 1000 * 1000 * 1000`', 'exec("a" * 1000 * 1000 * 1000)\n')
case("bomb-join-repeat", "exec", '`"".join(["a"] * 10**9)`', 'exec("".join(["a"] * 10**9))\n')
case("bomb-percent-width", "exec", '`"%9999999999s" % "a"`', 'exec("%9999999999s" % "a")\n')
case("bomb-percent-left", "exec", '`"%-999999999s" % "a"`', 'exec("%-999999999s" % "a")\n')
case("bomb-percent-star", "exec", '`"%*s" % (999999999, "a")`', 'exec("%*s" % (999999999, "a"))\n')
case("bomb-percent-precision", "exec", '`"%.999999999f" % 1.0`', 'exec("%.999999999f" % 1.0)\n')
case("bomb-percent-zero", "exec", '`"%0999999999d" % 1`', 'exec("%0999999999d" % 1)\n')
case("bomb-format-width", "exec", '`"{:>999999999}".format("a")`', 'exec("{:>999999999}".format("a"))\n')
case("bomb-format-center", "exec", '`"{:^999999999}".format("a")`', 'exec("{:^999999999}".format("a"))\n')
case("bomb-format-fill", "exec", '`"{:x<999999999}".format("a")`', 'exec("{:x<999999999}".format("a"))\n')
case("bomb-format-nested-width", "exec", '`"{0:{1}}".format("a", 999999999)`',
     'exec("{0:{1}}".format("a", 999999999))\n')
case("bomb-format-precision", "exec", '`"{:.999999999f}".format(1.0)`', 'exec("{:.999999999f}".format(1.0))\n')
case("bomb-format-builtin", "exec", '`format("a", ">999999999")`', 'exec(format("a", ">999999999"))\n')
case("bomb-format-repeat-fields", "exec", '`("{0}" * 100000).format("a" * 100000)`',
     'exec(("{0}" * 100000).format("a" * 100000))\n')
case("bomb-fstring-width", "exec", "`f\"{'a':>999999999}\"`", "exec(f\"{'a':>999999999}\")\n")
case("bomb-fstring-nested-width", "exec", '`f"{x:{w}}"` with `w = 999999999`',
     'x = "a"\nw = 999999999\nexec(f"{x:{w}}")\n')
case("bomb-fstring-precision", "exec", '`f"{1.0:.999999999f}"`', 'exec(f"{1.0:.999999999f}")\n')
case("bomb-ljust", "exec", '`"a".ljust(10**9)`', 'exec("a".ljust(10**9))\n')
case("bomb-rjust", "exec", '`"a".rjust(999999999, "x")`', 'exec("a".rjust(999999999, "x"))\n')
case("bomb-center", "exec", '`"a".center(999999999)`', 'exec("a".center(999999999))\n')
case("bomb-zfill", "exec", '`"1".zfill(999999999)`', 'exec("1".zfill(999999999))\n')
case("bomb-expandtabs", "exec", '`("\\t" * 1000).expandtabs(999999999)`',
     'exec(("\\t" * 1000).expandtabs(999999999))\n')
case("bomb-bytes", "exec", "`bytes(10**12)`", "exec(bytes(10**12))\n")
case("bomb-bytes-literal", "exec", "`bytes(1000000000000)`", "exec(bytes(1000000000000))\n")
case("bomb-bytearray", "exec", "`bytearray(10**12)`", "exec(bytearray(10**12))\n")
case("bomb-bytes-multiply", "exec", '`b"\\x00" * 10**12`', 'exec(b"\\x00" * 10**12)\n')
case("bomb-padding-chain", "exec", "`.ljust(999)` 30 times on a growing string, then `* 999`",
     'x = "a"\n' + "".join(f"x = (x * 999).ljust({999 * (i + 1)})\n" for i in range(30)) + "exec(x)\n")


def compressed_zeros(compressor, n):
    """`n` zero bytes through `compressor`, streamed (never held in memory)."""
    block = bytes(1 << 20)
    out = []
    for _ in range(n >> 20):
        out.append(compressor.compress(block))
    out.append(compressor.flush())
    return b"".join(out)


def zlib_bomb():
    """1 GiB of zeros, zlib-compressed twice: a few hundred bytes."""
    once = compressed_zeros(zlib.compressobj(9), 1 << 30)
    return zlib.compress(once, 9)


def bz2_bomb():
    """1 GiB of zeros, bz2-compressed: well under 1 KB."""
    return compressed_zeros(bz2.BZ2Compressor(9), 1 << 30)


ZB = base64.b64encode(zlib_bomb()).decode()
case("bomb-zlib-twice", "exec", "`zlib.decompress(zlib.decompress(base64...))`: 1 GiB of zeros",
     f'import base64, zlib\nexec(zlib.decompress(zlib.decompress(base64.b64decode("{ZB}"))))\n')
BB = base64.b64encode(bz2_bomb()).decode()
case("bomb-bz2", "exec", "`bz2.decompress(base64...)`: 1 GiB of zeros",
     f'import base64, bz2\nexec(bz2.decompress(base64.b64decode("{BB}")))\n')
case("bomb-codecs-zlib", "exec", '`codecs.decode(codecs.decode(..., "zlib"), "zlib")`: 1 GiB of zeros',
     f'import base64, codecs\nexec(codecs.decode(codecs.decode(base64.b64decode("{ZB}"), "zlib"), "zlib"))\n')

# ---- real code of the shape that aborted the judge -------------------------------------------

# A minimal equivalent of CPython's Lib/site.py `addpackage`: `.pth` lines that start with
# `import` are executed; `line = line.rstrip()` made the name refer to itself.
case("site-py-like", "exec", "CPython's `site.addpackage` shape: `line = line.rstrip()` and `exec(line)`", '''\
"""Append module search paths for third-party packages to sys.path."""

import os
import sys


def makepath(*paths):
    dir = os.path.join(*paths)
    try:
        dir = os.path.abspath(dir)
    except OSError:
        pass
    return dir, os.path.normcase(dir)


def addpackage(sitedir, name, known_paths):
    """Process a .pth file within the site-packages directory."""
    fullname = os.path.join(sitedir, name)
    try:
        f = open(fullname, "r", encoding="utf-8")
    except OSError:
        return None
    with f:
        for n, line in enumerate(f):
            if line.startswith("#"):
                continue
            if line.strip() == "":
                continue
            try:
                if line.startswith(("import ", "import\\t")):
                    exec(line)
                    continue
                line = line.rstrip()
                dir, dircase = makepath(sitedir, line)
                if dircase not in known_paths and os.path.exists(dir):
                    sys.path.append(dir)
                    known_paths.add(dircase)
            except Exception:
                print("Error processing line {:d} of {}".format(n + 1, fullname), file=sys.stderr)
                break
    return known_paths
''')


CONFIG = json.dumps({
    "architectures": ["XModel"],
    "auto_map": {"AutoModel": "modeling_x.XModel"},
    "model_type": "x",
}, indent=2) + "\n"


def parses(source):
    """CPython's own verdict, where its parser can take the file at all."""
    try:
        ast.parse(source)
        return "yes"
    except SyntaxError as e:
        return f"no ({e.msg})"
    except (RecursionError, MemoryError):
        return "no (too deep for CPython's parser)"


README_HEAD = """\
# Hostile Python for the code judge (issue 37)

Written by `scripts/make-hostile-python.py` (standard library only; rerun it to regenerate, it
rewrites every case folder and this file, byte for byte the same). Each folder is a model
directory: `config.json` whose `auto_map` names `modeling_x.py`, and that file, which is built to
exhaust the code judge (SRC006) rather than to pass it: names, attributes and subscripts that
refer to themselves through every string operation the literal evaluator folds, cycles of two and
three names, chains of 10,000 terms, nesting 100,000 parentheses deep, 50,000 nested lists, 5,000
nested calls, and expansion and padding bombs (up to a terabyte as written; the compressed ones
are 1 GiB of zeros compressed, a few hundred bytes). `site-py-like` is a minimal equivalent of
CPython's `site.addpackage` (`line = line.rstrip()` then `exec(line)`), written here, not copied.
Nothing was ever run. "CPython parses" is `ast.parse` on the generating interpreter.

Every folder must give a report with exit 0 or 1 (never 2, never a crash). Where `sink` names a
call, the judge must still report SRC006 on `modeling_x.py` for it: a value it gives up on never
hides the call. `tests/hostile_python` checks both from the binary; `scripts/bench-hostile.sh`
prints each folder's time and peak memory.

Machine-readable: every row below is `` | `case` | sink | what | CPython parses | ``.

| case | sink | what | CPython parses |
|---|---|---|---|
"""


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "hostile-python")
    out = os.path.normpath(out)
    names = [c[0] for c in CASES]
    if len(names) != len(set(names)):
        sys.exit("duplicate case names")
    if os.path.isdir(out):
        for entry in os.listdir(out):
            path = os.path.join(out, entry)
            if os.path.isdir(path):
                shutil.rmtree(path)
    os.makedirs(out, exist_ok=True)
    rows = []
    total = 0
    for name, sink, what, source in sorted(CASES):
        folder = os.path.join(out, name)
        os.makedirs(folder)
        for fname, text in (("config.json", CONFIG), ("modeling_x.py", source)):
            with open(os.path.join(folder, fname), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            total += len(text.encode())
        rows.append(f"| `{name}` | {sink if sink else '-'} | {what} | {parses(source)} |\n")
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(README_HEAD + "".join(rows))
    print(f"{len(CASES)} cases, {total} bytes, in {out}")


if __name__ == "__main__":
    main()
