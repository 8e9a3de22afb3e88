#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fsx.py: a compact fsx-like checker (after the File System eXerciser).
Random writes, reads, truncates, fallocate (extending, keep-size, punch
hole, zero range), fsyncs and reopens on one file against an in-memory
model; every read is compared with the model, and the whole file at the
end. No mmap.

  fsx.py [-S SEED] [-N OPS] [-l MAXLEN] [-o MAXOP] [--at K=CMD]... FILE

  -S SEED     random seed (printed; default 1)
  -N OPS      number of ops (default 10000)
  -l MAXLEN   largest file size (default 256 KiB)
  -o MAXOP    largest single read or write (default 64 KiB)
  --at K=CMD  before op K, run CMD with sh -c (must exit 0); for fault
              tests: kill a brick halfway, start it again later
  --no-punch  no fallocate hole punching or zero range (a file system
              without them answers EOPNOTSUPP: fsx then stops using them)

Exit 0 and "fsx: N ops ok" when every check passed; 1 with the failed
op, the first differing offset and the last 16 ops otherwise; 2 on
bad arguments.
"""

import collections
import ctypes
import ctypes.util
import errno
import os
import random
import subprocess
import sys

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                            ctypes.c_int64]


def fallocate(fd, mode, off, length):
    if _libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Failed(Exception):
    pass


class Fsx:
    def __init__(self, path, seed, maxlen, maxop, hooks, punch):
        self.path = path
        self.rnd = random.Random(seed)
        self.maxlen = maxlen
        self.maxop = maxop
        self.hooks = hooks
        self.punch = punch
        self.model = bytearray()
        self.history = collections.deque(maxlen=16)
        self.counts = collections.Counter()
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)

    def note(self, n, what):
        self.history.append("%d %s" % (n, what))
        self.counts[what.split()[0]] += 1

    def fail(self, n, why):
        lines = ["fsx: op %d failed: %s" % (n, why), "last ops:"]
        lines += ["  " + h for h in self.history]
        raise Failed("\n".join(lines))

    def check(self, n, off, got, want):
        if got == want:
            return
        first = next((i for i in range(min(len(got), len(want)))
                      if got[i] != want[i]), min(len(got), len(want)))
        self.fail(n, "read %d+%d: %d bytes, model %d; first difference at "
                  "offset %d (got %r, want %r)"
                  % (off, len(want), len(got), len(want), off + first,
                     got[first:first + 8], want[first:first + 8]))

    def span(self, limit):
        off = self.rnd.randrange(0, max(limit, 1))
        length = self.rnd.randrange(1, self.maxop + 1)
        return off, length

    def op_read(self, n):
        size = len(self.model)
        if size == 0:
            return self.op_write(n)
        off, length = self.span(size)
        length = min(length, size - off)
        self.note(n, "read %d+%d" % (off, length))
        got = os.pread(self.fd, length, off)
        self.check(n, off, got, bytes(self.model[off:off + length]))

    def op_write(self, n):
        off, length = self.span(self.maxlen)
        length = min(length, self.maxlen - off)
        data = self.rnd.randbytes(length)
        self.note(n, "write %d+%d" % (off, length))
        if os.pwrite(self.fd, data, off) != length:
            self.fail(n, "short write")
        if off > len(self.model):
            self.model += bytes(off - len(self.model))
        self.model[off:off + length] = data

    def op_truncate(self, n):
        size = self.rnd.randrange(0, self.maxlen + 1)
        self.note(n, "truncate %d (from %d)" % (size, len(self.model)))
        os.ftruncate(self.fd, size)
        if size < len(self.model):
            del self.model[size:]
        else:
            self.model += bytes(size - len(self.model))

    def op_fallocate(self, n):
        off, length = self.span(self.maxlen)
        length = min(length, self.maxlen - off)
        kinds = ["extend", "keep"]
        if self.punch:
            kinds += ["punch", "punch", "zero"]
        kind = self.rnd.choice(kinds)
        mode = {"extend": 0, "keep": FALLOC_FL_KEEP_SIZE,
                "punch": FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                "zero": FALLOC_FL_ZERO_RANGE}[kind]
        self.note(n, "fallocate-%s %d+%d" % (kind, off, length))
        fallocate(self.fd, mode, off, length)
        end = off + length
        if kind in ("extend", "zero") and end > len(self.model):
            self.model += bytes(end - len(self.model))
        if kind in ("punch", "zero"):
            stop = min(end, len(self.model))
            if stop > off:
                self.model[off:stop] = bytes(stop - off)

    def op_fsync(self, n):
        self.note(n, "fsync")
        os.fsync(self.fd)

    def op_reopen(self, n):
        self.note(n, "reopen")
        os.close(self.fd)
        self.fd = os.open(self.path, os.O_RDWR)

    def op_stat(self, n):
        self.note(n, "fstat")
        size = os.fstat(self.fd).st_size
        if size != len(self.model):
            self.fail(n, "size %d, model %d" % (size, len(self.model)))

    OPS = [(op_read, 30), (op_write, 30), (op_truncate, 6),
           (op_fallocate, 12), (op_fsync, 4), (op_reopen, 3), (op_stat, 5)]

    def run(self, n_ops):
        total = sum(w for _, w in self.OPS)
        for n in range(1, n_ops + 1):
            if n in self.hooks:
                for cmd in self.hooks[n]:
                    self.note(n, "hook %s" % cmd)
                    rc = subprocess.call(["sh", "-c", cmd])
                    if rc != 0:
                        self.fail(n, "hook exited %d: %s" % (rc, cmd))
            x = self.rnd.randrange(total)
            for fn, w in self.OPS:
                if x < w:
                    break
                x -= w
            try:
                fn(self, n)
            except OSError as e:
                if (e.errno == errno.EOPNOTSUPP and fn == Fsx.op_fallocate
                        and self.punch):
                    # Not supported here: say so and stop asking.
                    print("fsx: punch/zero range not supported: %s"
                          % e.strerror)
                    self.punch = False
                    self.history.pop()
                    continue
                self.fail(n, "%s: %s" % (fn.__name__, e))
        self.op_stat(n_ops + 1)
        os.fsync(self.fd)
        os.close(self.fd)
        with open(self.path, "rb") as f:
            self.check(n_ops + 1, 0, f.read(), bytes(self.model))


def main(argv):
    seed, n_ops, maxlen, maxop = 1, 10000, 256 * 1024, 64 * 1024
    hooks = collections.defaultdict(list)
    punch = True
    path = None
    args = list(argv)
    try:
        while args:
            a = args.pop(0)
            if a == "-S":
                seed = int(args.pop(0))
            elif a == "-N":
                n_ops = int(args.pop(0))
            elif a == "-l":
                maxlen = int(args.pop(0))
            elif a == "-o":
                maxop = int(args.pop(0))
            elif a == "--at":
                k, cmd = args.pop(0).split("=", 1)
                hooks[int(k)].append(cmd)
            elif a == "--no-punch":
                punch = False
            elif path is None and not a.startswith("-"):
                path = a
            else:
                raise ValueError(a)
        if path is None or n_ops < 1 or maxlen < 1 or maxop < 1:
            raise ValueError("")
    except (ValueError, IndexError):
        sys.stderr.write(__doc__)
        return 2
    print("fsx: seed %d, %d ops, file %s, maxlen %d" % (seed, n_ops, path,
                                                         maxlen))
    sys.stdout.flush()
    fsx = Fsx(path, seed, maxlen, maxop, hooks, punch)
    try:
        fsx.run(n_ops)
    except Failed as e:
        print(e)
        return 1
    print("fsx: %d ops ok (%s)" % (n_ops, ", ".join(
        "%s %d" % kv for kv in sorted(fsx.counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
