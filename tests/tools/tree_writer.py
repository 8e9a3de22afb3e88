#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tree_writer: a seeded writer of a small tree that keeps a model of
what the file system acknowledged, for fault tests (rep-chaos.t).

  tree_writer.py run MNT SEED DIR [MAX_OPS]
      Changes MNT/tw (directories d0..d3, files f00..f15, symlinks
      l0..l3 in each) with creates, appends, range overwrites,
      truncates (by path and by fd), renames (over existing names too),
      unlinks, chmods, symlinks, fsyncs and reads checked against the
      model, until DIR/stop exists (or MAX_OPS ops). While DIR/pause
      exists it waits between two ops and says so in DIR/paused.
      DIR/ops.log: one line per acknowledged op; DIR/errors: one line
      per failed op or wrong read (after a failed op the file is read
      back from MNT to keep the model usable; what cannot be read is
      left out of the model and listed in DIR/unknown); at the end
      DIR/model (sha256, size, mode, path of every file; "link TARGET
      path" for symlinks) and DIR/done with the number of ops.
  tree_writer.py verify MNT DIR
      Prints "ok" if MNT/tw holds exactly the model (names, contents,
      modes, symlink targets), else the first differences.
  tree_writer.py snapshot BRICKDIR
      One line per object under BRICKDIR (not .mortar): type, mode,
      owner, size, sha256 of a file's bytes, symlink target and the
      trusted.mortar.gfid xattr; two bricks holding the same tree print
      the same lines.
"""

import errno
import hashlib
import os
import random
import stat
import sys
import time

DIRS = ["d%d" % i for i in range(4)]
FILES = ["f%02d" % i for i in range(16)]
LINKS = ["l%d" % i for i in range(4)]
MODES = [0o644, 0o600, 0o640, 0o755, 0o664]
MAX_SIZE = 192 * 1024


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Writer:
    def __init__(self, mnt, seed, sdir):
        self.root = os.path.join(mnt, "tw")
        self.rnd = random.Random(seed)
        self.sdir = sdir
        self.files = {}     # rel -> bytearray
        self.modes = {}     # rel -> permission bits
        self.links = {}     # rel -> target
        self.unknown = set()
        self.n_ops = 0
        self.n_err = 0
        self.log = open(os.path.join(sdir, "ops.log"), "a", buffering=1)
        self.err = open(os.path.join(sdir, "errors"), "a", buffering=1)

    def path(self, rel):
        return os.path.join(self.root, rel)

    def ok(self, what):
        self.n_ops += 1
        self.log.write("%d %s\n" % (self.n_ops, what))

    def fail(self, what, e):
        self.n_err += 1
        name = errno.errorcode.get(getattr(e, "errno", 0) or 0, "?")
        self.err.write("%s: %s %s (op %d, %s)\n" % (
            what, name, e, self.n_ops + 1,
            time.strftime("%H:%M:%S", time.gmtime())))

    # After a failed op the name's state is unknown: read it back.
    def resync(self, rel):
        for m in (self.files, self.modes, self.links):
            m.pop(rel, None)
        self.unknown.discard(rel)
        try:
            st = os.lstat(self.path(rel))
            if stat.S_ISLNK(st.st_mode):
                self.links[rel] = os.readlink(self.path(rel))
            else:
                with open(self.path(rel), "rb") as f:
                    self.files[rel] = bytearray(f.read())
                self.modes[rel] = stat.S_IMODE(st.st_mode)
        except FileNotFoundError:
            pass
        except OSError:
            self.unknown.add(rel)

    def data(self, n):
        return self.rnd.randbytes(n)

    def pick_file(self):
        if not self.files:
            return None
        return self.rnd.choice(sorted(self.files))

    def new_name(self):
        return os.path.join(self.rnd.choice(DIRS), self.rnd.choice(FILES))

    def write_fd(self, rel, flags, fn, sync):
        fd = os.open(self.path(rel), flags, 0o644)
        try:
            fn(fd)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def op_create(self):
        rel = self.new_name()
        if rel in self.files or rel in self.unknown:
            return self.op_overwrite()
        body = self.data(self.rnd.randrange(0, 64 * 1024))
        sync = self.rnd.random() < 0.3

        def fn(fd):
            if os.write(fd, body) != len(body):
                raise OSError(errno.EIO, "short write")
        self.write_fd(rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, fn, sync)
        self.files[rel] = bytearray(body)
        self.modes[rel] = 0o644 & ~self.umask
        return "create %s %d%s" % (rel, len(body), " fsync" if sync else "")

    def op_append(self):
        rel = self.pick_file()
        if rel is None or len(self.files[rel]) > MAX_SIZE:
            return self.op_truncate()
        body = self.data(self.rnd.randrange(1, 32 * 1024))
        sync = self.rnd.random() < 0.3

        def fn(fd):
            if os.write(fd, body) != len(body):
                raise OSError(errno.EIO, "short write")
        self.write_fd(rel, os.O_WRONLY | os.O_APPEND, fn, sync)
        self.files[rel] += body
        return "append %s %d%s" % (rel, len(body), " fsync" if sync else "")

    def op_overwrite(self):
        rel = self.pick_file()
        if rel is None:
            return self.op_create()
        cur = self.files[rel]
        off = self.rnd.randrange(0, len(cur) + 4096)
        body = self.data(self.rnd.randrange(1, 24 * 1024))
        sync = self.rnd.random() < 0.3

        def fn(fd):
            if os.pwrite(fd, body, off) != len(body):
                raise OSError(errno.EIO, "short write")
        self.write_fd(rel, os.O_WRONLY, fn, sync)
        if off > len(cur):
            cur += bytes(off - len(cur))
        cur[off:off + len(body)] = body
        return "pwrite %s %d+%d%s" % (rel, off, len(body),
                                      " fsync" if sync else "")

    def op_truncate(self):
        rel = self.pick_file()
        if rel is None:
            return self.op_create()
        cur = self.files[rel]
        size = self.rnd.randrange(0, len(cur) + 8192)
        if self.rnd.random() < 0.5:
            os.truncate(self.path(rel), size)
            how = "truncate"
        else:
            self.write_fd(rel, os.O_WRONLY,
                          lambda fd: os.ftruncate(fd, size), False)
            how = "ftruncate"
        if size < len(cur):
            del cur[size:]
        else:
            cur += bytes(size - len(cur))
        return "%s %s %d" % (how, rel, size)

    def op_rename(self):
        rel = self.pick_file()
        if rel is None:
            return self.op_create()
        dst = self.new_name()
        if dst == rel or dst in self.unknown or dst in self.links:
            return self.op_overwrite()
        os.rename(self.path(rel), self.path(dst))
        self.files[dst] = self.files.pop(rel)
        self.modes[dst] = self.modes.pop(rel)
        return "rename %s %s" % (rel, dst)

    def op_unlink(self):
        rel = self.pick_file()
        if rel is None:
            return self.op_create()
        os.unlink(self.path(rel))
        del self.files[rel]
        del self.modes[rel]
        return "unlink %s" % rel

    def op_chmod(self):
        rel = self.pick_file()
        if rel is None:
            return self.op_create()
        mode = self.rnd.choice(MODES)
        os.chmod(self.path(rel), mode)
        self.modes[rel] = mode
        return "chmod %s %o" % (rel, mode)

    def op_symlink(self):
        rel = os.path.join(self.rnd.choice(DIRS), self.rnd.choice(LINKS))
        if rel in self.links:
            os.unlink(self.path(rel))
            del self.links[rel]
            return "unlink %s" % rel
        target = "../%s/%s" % (self.rnd.choice(DIRS), self.rnd.choice(FILES))
        os.symlink(target, self.path(rel))
        self.links[rel] = target
        return "symlink %s %s" % (rel, target)

    def op_read(self):
        rel = self.pick_file()
        if rel is None:
            return self.op_create()
        with open(self.path(rel), "rb") as f:
            got = f.read()
        if got != bytes(self.files[rel]):
            raise OSError(errno.EIO, "read of %s: %d bytes sha %s, model %d "
                          "bytes sha %s" % (rel, len(got), sha(got)[:12],
                                            len(self.files[rel]),
                                            sha(bytes(self.files[rel]))[:12]))
        return "read %s %d" % (rel, len(got))

    OPS = [(op_create, 14), (op_append, 14), (op_overwrite, 18),
           (op_truncate, 8), (op_rename, 8), (op_unlink, 6), (op_chmod, 5),
           (op_symlink, 4), (op_read, 23)]

    def step(self):
        total = sum(w for _, w in self.OPS)
        x = self.rnd.randrange(total)
        for fn, w in self.OPS:
            if x < w:
                break
            x -= w
        try:
            self.ok(fn(self))
        except OSError as e:
            self.fail(fn.__name__, e)
            for d in DIRS:
                for name in FILES + LINKS:
                    self.resync(os.path.join(d, name))

    def run(self, max_ops):
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        os.makedirs(self.root, exist_ok=True)
        for d in DIRS:
            os.makedirs(self.path(d), exist_ok=True)
        pause = os.path.join(self.sdir, "pause")
        paused = os.path.join(self.sdir, "paused")
        stop = os.path.join(self.sdir, "stop")
        n = 0
        while not os.path.exists(stop) and (max_ops == 0 or n < max_ops):
            if os.path.exists(pause):
                open(paused, "w").close()
                while os.path.exists(pause) and not os.path.exists(stop):
                    time.sleep(0.05)
                os.unlink(paused)
                continue
            self.step()
            n += 1
        self.save()

    def save(self):
        with open(os.path.join(self.sdir, "model"), "w") as out:
            for rel in sorted(self.files):
                body = bytes(self.files[rel])
                out.write("%s %d %o %s\n" % (sha(body), len(body),
                                             self.modes[rel], rel))
            for rel in sorted(self.links):
                out.write("link %s %s\n" % (self.links[rel], rel))
        with open(os.path.join(self.sdir, "unknown"), "w") as out:
            for rel in sorted(self.unknown):
                out.write(rel + "\n")
        with open(os.path.join(self.sdir, "done"), "w") as out:
            out.write("%d %d\n" % (self.n_ops, self.n_err))


def verify(mnt, sdir):
    root = os.path.join(mnt, "tw")
    want = {}
    for line in open(os.path.join(sdir, "model")):
        f = line.rstrip("\n").split(" ", 3)
        if f[0] == "link":
            want[f[2]] = ("link", f[1])
        else:
            want[f[3]] = ("file", f[0], int(f[1]), int(f[2], 8))
    unknown = set(l.strip() for l in open(os.path.join(sdir, "unknown")))
    got = {}
    bad = []
    if not os.path.isdir(root):
        print("%s: not a directory" % root)
        return
    for d in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, d))):
            rel = os.path.join(d, name)
            p = os.path.join(root, rel)
            try:
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    got[rel] = ("link", os.readlink(p))
                else:
                    with open(p, "rb") as f:
                        body = f.read()
                    got[rel] = ("file", sha(body), len(body),
                                stat.S_IMODE(st.st_mode))
            except OSError as e:
                bad.append("%s: %s" % (rel, e.strerror))
    for rel in sorted(set(want) | set(got)):
        if rel in unknown:
            continue
        if want.get(rel) != got.get(rel):
            bad.append("%s: model %s, mount %s" % (rel, want.get(rel),
                                                  got.get(rel)))
    print("\n".join(bad[:20]) if bad else "ok")


def snapshot(brick):
    out = []
    for top, dirs, files in os.walk(brick):
        if top == brick and ".mortar" in dirs:
            dirs.remove(".mortar")
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(top, name)
            rel = os.path.relpath(p, brick)
            st = os.lstat(p)
            try:
                gfid = os.getxattr(p, "trusted.mortar.gfid",
                                   follow_symlinks=False).hex()
            except OSError:
                gfid = "-"
            extra = "-"
            if stat.S_ISLNK(st.st_mode):
                extra = "->" + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    extra = sha(f.read())
            size = st.st_size if not stat.S_ISDIR(st.st_mode) else 0
            out.append("%s %o %d:%d %d %s %s" % (
                rel, st.st_mode, st.st_uid, st.st_gid, size, gfid, extra))
    print("\n".join(out))


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "run" and len(sys.argv) in (5, 6):
        w = Writer(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        w.run(int(sys.argv[5]) if len(sys.argv) == 6 else 0)
    elif cmd == "verify" and len(sys.argv) == 4:
        verify(sys.argv[2], sys.argv[3])
    elif cmd == "snapshot" and len(sys.argv) == 3:
        snapshot(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
