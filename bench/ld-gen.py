#!/usr/bin/env python3
"""Writes the C sources of bench/ld.sh's object trees, deterministically from a seed.

    ld-gen.py SEED FILES OUTDIR

makes OUTDIR/t1 and OUTDIR/t2, each with FILES C files (f000.c, ...) and an entry file
(main.c), plus OUTDIR/sizes: the target object size of every file. The sizes follow the
object files of the paper's GNU ld benchmark (thesis section 9.5: 75% under 10 KB, 96% under
25 KB): 75% uniform on [1.5 KB, 10 KB), 21% on [10 KB, 25 KB), 4% on [25 KB, 64 KB). Each file
holds functions (about one per 600 bytes of target size, each calling the one before it, and
the first calling the previous file's last, so the link resolves symbols across files) and a
read-only table of pseudo-random bytes that brings the object to its target size. Only
Python's own seeded generator is used, so the same seed gives the same bytes on any machine;
the objects then depend only on the compiler.
"""
import os
import random
import sys

# Bytes of an object beyond its table: ELF header, section headers, symbol and string tables,
# code and relocations. Measured with Debian's gcc 12 at -O1 (about 1.4 KB fixed and 120 bytes
# a function); the sizes the script reports are the compiled objects' own.
FIXED = 1400
PER_FUNCTION = 120


def target_size(rng):
    u = rng.random()
    if u < 0.75:
        return rng.randrange(1536, 10240)
    if u < 0.96:
        return rng.randrange(10240, 25600)
    return rng.randrange(25600, 65536)


def source(tree, i, size, rng):
    functions = max(1, size // 600)
    table = max(16, size - FIXED - functions * PER_FUNCTION)
    out = [f"/* bench/ld.sh tree {tree}, object {i}: target {size} bytes */\n"]
    if i > 0:
        out.append(f"int t{tree}_f{i - 1}_{max(1, target_sizes[i - 1] // 600) - 1}(int);\n")
    out.append(f"static const unsigned char t{tree}_table{i}[{table}] = {{\n")
    data = rng.randbytes(table)
    for k in range(0, table, 32):
        out.append(",".join(str(b) for b in data[k:k + 32]) + ",\n")
    out.append("};\n")
    for f in range(functions):
        a, b = rng.randrange(1, 1000), rng.randrange(1, 100000)
        if f == 0:
            call = f"t{tree}_f{i - 1}_{max(1, target_sizes[i - 1] // 600) - 1}(x)" if i > 0 else "x"
        else:
            call = f"t{tree}_f{i}_{f - 1}(x)"
        out.append(
            f"int t{tree}_f{i}_{f}(int x) {{ return {call} * {a} + {b} + "
            f"t{tree}_table{i}[(unsigned)x % {table}u]; }}\n"
        )
    return "".join(out)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: ld-gen.py SEED FILES OUTDIR")
    try:
        seed, files = int(sys.argv[1]), int(sys.argv[2])
    except ValueError:
        sys.exit(f"ld-gen.py: SEED and FILES must be whole numbers, not {sys.argv[1]!r} and {sys.argv[2]!r}")
    if files < 1 or files > 100000:
        sys.exit(f"ld-gen.py: FILES must be 1 to 100000, not {files}")
    outdir = sys.argv[3]
    global target_sizes
    lines = []
    for tree in (1, 2):
        rng = random.Random(f"antsched-ld-{seed}-{tree}")
        target_sizes = [target_size(rng) for _ in range(files)]
        d = os.path.join(outdir, f"t{tree}")
        os.makedirs(d, exist_ok=True)
        for i, size in enumerate(target_sizes):
            with open(os.path.join(d, f"f{i:03d}.c"), "w") as f:
                f.write(source(tree, i, size, rng))
            lines.append(f"t{tree}/f{i:03d}.o {size}\n")
        last = f"t{tree}_f{files - 1}_{max(1, target_sizes[-1] // 600) - 1}"
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write(
                f"int {last}(int);\n"
                "volatile int ld_result;\n"
                "void ld_main(void) { ld_result = " + last + "(7); for (;;) ; }\n"
            )
    with open(os.path.join(outdir, "sizes"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
