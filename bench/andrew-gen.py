#!/usr/bin/env python3
"""Writes the source repositories of bench/andrew.sh, deterministically from a seed.

    andrew-gen.py SEED CLIENTS DIRS OUTDIR

makes OUTDIR/c1/src, ..., OUTDIR/cCLIENTS/src, each a small C program of 71 files: a header
(src/common.h) and 70 C files spread round-robin over DIRS subdirectories (src/d0, ...), the
first of them (d0/main.c) holding main(). Every C file includes <stdio.h>, <string.h>,
<stdlib.h> and "../common.h", and defines static tables, structures and functions with loops,
switches and calls into the previous file, so gcc has real work to do and the link resolves
symbols across files; the program prints a checksum.

Sizes: the original Andrew benchmark's tree was about 70 files and 200 KB, so about 3 KB a
file; sources of C programs have a long tail. Each C file's target size is drawn log-normally
(median 4 KiB, sigma 0.9: about 60% of the files under 5 KiB, 5% over 16 KiB), clipped to
[600 B, 48 KiB]; a client's tree is about 400 KiB. Each client's tree has its own seed (the
same shape, different bytes), so the clients share no file. Only Python's own seeded generator
is used: the same seed gives the same bytes on any machine. OUTDIR/sizes lists every file and
its size.
"""
import math
import os
import random
import sys

FILES = 70  # C files; with common.h, the paper's 71 files


def target_size(rng):
    return int(min(48 * 1024, max(600, 4096 * math.exp(rng.gauss(0.0, 0.9)))))


def function(c, i, k, rng, prev):
    """One function of file i (its k-th), calling `prev`."""
    a, b, m = rng.randrange(3, 997), rng.randrange(1, 65521), rng.randrange(5, 61)
    kind = rng.randrange(4)
    name = f"c{c}_f{i}_{k}"
    if kind == 0:
        body = (
            f"    unsigned acc = {b}u;\n"
            f"    for (int j = 0; j < (x & 31) + {m}; j++) {{\n"
            f"        acc = acc * {a}u + (unsigned)tab{i}[(acc + (unsigned)j) % TAB{i}];\n"
            f"        if (acc & 1) acc ^= (unsigned)j << 3;\n"
            f"    }}\n"
            f"    return (int)(acc & 0xffff) + ({prev}(x - 1) & 0xffff);\n"
        )
    elif kind == 1:
        body = (
            f"    switch ((unsigned)x % 5u) {{\n"
            f"    case 0: return ({prev}(x) & 0xffff) * {a};\n"
            f"    case 1: return (int)strlen(names{i}[(unsigned)x % NAMES{i}]) + {b};\n"
            f"    case 2: return {prev}(x >> 1) ^ {b};\n"
            f"    case 3: {{ struct rec r = {{ x, {a}, \"c{c}_{i}_{k}\" }}; return rec_sum(&r) + {m}; }}\n"
            f"    default: return x + {m};\n"
            f"    }}\n"
        )
    elif kind == 2:
        body = (
            f"    char buf[64];\n"
            f"    snprintf(buf, sizeof buf, \"%d:%s\", x, names{i}[(unsigned)x % NAMES{i}]);\n"
            f"    unsigned h = {b}u;\n"
            f"    for (const char *p = buf; *p; p++) h = h * 31u + (unsigned char)*p;\n"
            f"    return (int)(h & 0xffff) + ({prev}(x + {m}) & 0xffff);\n"
        )
    else:
        body = (
            f"    struct rec *v = malloc(sizeof *v * {m});\n"
            f"    if (!v) return -1;\n"
            f"    int s = 0;\n"
            f"    for (int j = 0; j < {m}; j++) {{ v[j].a = x + j; v[j].b = {a} - j; v[j].tag = \"{name}\"; }}\n"
            f"    for (int j = 0; j < {m}; j++) s += rec_sum(&v[j]);\n"
            f"    free(v);\n"
            f"    return (s & 0xffff) ^ {prev}(x);\n"
        )
    return f"static int {name}(int x)\n{{\n{body}}}\n\n"


def source(c, i, size, rng):
    prev_public = f"mod{i - 1}" if i > 0 else "leaf"
    out = [
        f"/* bench/andrew.sh client {c}, module {i}: about {size} bytes of C */\n",
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"../common.h\"\n\n",
    ]
    tab = rng.randrange(8, 48)
    out.append(f"#define TAB{i} {tab}\nstatic const int tab{i}[TAB{i}] = {{")
    out.append(", ".join(str(rng.randrange(-99999, 99999)) for _ in range(tab)))
    out.append("};\n")
    names = rng.randrange(3, 12)
    out.append(f"#define NAMES{i} {names}\nstatic const char *const names{i}[NAMES{i}] = {{")
    out.append(", ".join(f'"n{rng.getrandbits(40):x}"' for _ in range(names)))
    out.append("};\n\n")
    # The first function calls the previous module; each later one the one before it.
    prev = "leaf_prev"
    out.append(f"static int leaf_prev(int x) {{ return x <= 0 ? 1 : {prev_public}(x - 1); }}\n\n")
    k = 0
    while sum(map(len, out)) < size - 200 or k == 0:
        out.append(function(c, i, k, rng, prev))
        prev = f"c{c}_f{i}_{k}"
        k += 1
    out.append(f"int mod{i}(int x)\n{{\n    return x <= 0 ? 1 : {prev}(x - 1) & 0xffff;\n}}\n")
    if i == 0:
        out.append(
            "\nint leaf(int x) { return x; }\n\n"
            "int main(int argc, char **argv)\n{\n"
            "    (void)argv;\n"
            "    long sum = 0;\n"
            f"    for (int x = 0; x < {FILES}; x++) sum += mod{FILES - 1}(argc + (x & 3));\n"
            "    printf(\"%ld\\n\", sum);\n"
            "    return 0;\n}\n"
        )
    return "".join(out)


def header(c):
    decls = "".join(f"int mod{i}(int x);\n" for i in range(FILES))
    return (
        f"/* bench/andrew.sh client {c}: declarations shared by every module */\n"
        "#ifndef ANDREW_COMMON_H\n#define ANDREW_COMMON_H\n\n"
        "struct rec { int a; int b; const char *tag; };\n\n"
        "static inline int rec_sum(const struct rec *r)\n"
        "{\n    return r->a * 7 + r->b + (int)strlen(r->tag);\n}\n\n"
        "int leaf(int x);\n" + decls + "\n#endif\n"
    )


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: andrew-gen.py SEED CLIENTS DIRS OUTDIR")
    try:
        seed, clients, dirs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    except ValueError:
        sys.exit(f"andrew-gen.py: SEED, CLIENTS and DIRS must be whole numbers, not {sys.argv[1:4]}")
    if not 1 <= clients <= 64 or not 1 <= dirs <= FILES:
        sys.exit(f"andrew-gen.py: CLIENTS must be 1 to 64 and DIRS 1 to {FILES}")
    outdir = sys.argv[4]
    lines = []
    for c in range(1, clients + 1):
        rng = random.Random(f"antsched-andrew-{seed}-{c}")
        src = os.path.join(outdir, f"c{c}", "src")
        for d in range(dirs):
            os.makedirs(os.path.join(src, f"d{d}"), exist_ok=True)
        text = header(c)
        with open(os.path.join(src, "common.h"), "w") as f:
            f.write(text)
        lines.append(f"c{c}/src/common.h {len(text)}\n")
        for i in range(FILES):
            name = "main.c" if i == 0 else f"m{i:02d}.c"
            rel = os.path.join(f"d{i % dirs}", name)
            text = source(c, i, target_size(rng), rng)
            with open(os.path.join(src, rel), "w") as f:
                f.write(text)
            lines.append(f"c{c}/src/{rel} {len(text)}\n")
    with open(os.path.join(outdir, "sizes"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
