#!/usr/bin/env python3
"""File-system operation drivers for bench/run.

Each sub-command does one timed workload inside a directory and prints one
line "<count> <seconds>" on stdout: the number of items it processed and the
wall time of the timed part (setup that is not part of the metric is done
before the clock starts). Errors go to stderr with a non-zero exit status,
so bench/run can mark the workload FAIL instead of printing a bogus rate.

Sub-commands:
  smallfile-create ROOT NDIRS NFILES NPROC   NFILES 4 KiB files in NDIRS dirs
  smallfile-read   ROOT NDIRS NFILES NPROC   read them back
  smallfile-delete ROOT NDIRS NFILES NPROC   unlink them (and the dirs)
  mkdir  ROOT N        N mkdir in one parent
  rmdir  ROOT N        N rmdir of what mkdir made
  rename ROOT N        create N empty files untimed, then time N renames

With FSOPS_CAP=S in the environment, smallfile-create, mkdir and rename
stop after S seconds and print how many they did; read and delete act on
the files that exist (read by name, delete after a listing).
  gentar TARFILE NFILES   deterministic source-like tree as a tar file;
                          prints "<entries> <bytes>"
  label DIR            "<fstype>\t<mount source>" from /proc/mounts

Parallel variants split the directories between NPROC forked processes;
the clock covers fork to the last child's exit.

With BENCH_PROBE_STATE=FILE (and BENCH_PROCS) in the environment, the
timed sub-commands snapshot the mount's processes right before their clock
starts and right after it stops (procstat.py begin/end FILE), so the CPU
they report is that of the timed part only.
"""

import io
import os
import random
import sys
import tarfile
import time

FILE_SIZE = 4096
PAYLOAD = bytes(range(256)) * (FILE_SIZE // 256)


def _dir_name(root, d):
    return os.path.join(root, "d%03d" % d)


def _file_name(root, d, f):
    return os.path.join(root, "d%03d" % d, "f%05d" % f)


def _files_of_dir(d, ndirs, nfiles):
    """File indexes that live in directory d (round-robin spread)."""
    return range(d, nfiles, ndirs)


def _deadline():
    """Monotonic time after which capped loops stop (FSOPS_CAP seconds)."""
    cap = float(os.environ.get("FSOPS_CAP", "0") or 0)
    return time.monotonic() + cap if cap > 0 else None


def _past(deadline):
    return deadline is not None and time.monotonic() >= deadline


def _sf_create(root, dirs, ndirs, nfiles, deadline):
    done = 0
    for d in dirs:
        if _past(deadline):
            break
        os.mkdir(_dir_name(root, d))
        for f in _files_of_dir(d, ndirs, nfiles):
            if _past(deadline):
                break
            fd = os.open(_file_name(root, d, f),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                if os.write(fd, PAYLOAD) != FILE_SIZE:
                    raise OSError("short write")
            finally:
                os.close(fd)
            done += 1
    return done


def _existing(root, d):
    """Names in directory d, or [] if a capped create never made it."""
    try:
        return os.listdir(_dir_name(root, d))
    except FileNotFoundError:
        return []


# Read opens each file by the name create gave it, as a web or mail server
# does, without listing the directory first (a listing would fill the
# kernel's and the file system's caches with every entry's attributes, on
# Mortar with small files' content too). Create makes each directory's
# files in index order, so what a capped create made is a prefix of that
# order: the first missing name ends the directory. The caller checks the
# count against create's. Delete acts on what exists (one listdir per
# directory, as rm does).
def _sf_read(root, dirs, ndirs, nfiles, deadline):
    done = 0
    for d in dirs:
        for f in _files_of_dir(d, ndirs, nfiles):
            path = _file_name(root, d, f)
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                break
            try:
                got = os.read(fd, FILE_SIZE + 1)
            finally:
                os.close(fd)
            if got != PAYLOAD:
                raise OSError("content mismatch in %s" % path)
            done += 1
    return done


def _sf_delete(root, dirs, ndirs, nfiles, deadline):
    done = 0
    for d in dirs:
        names = _existing(root, d)
        for name in names:
            os.unlink(os.path.join(_dir_name(root, d), name))
            done += 1
        if os.path.isdir(_dir_name(root, d)):
            os.rmdir(_dir_name(root, d))
    return done


def _probe(is_begin):
    """procstat snapshot at a clock edge, when bench/run asked for one."""
    state = os.environ.get("BENCH_PROBE_STATE")
    if not state:
        return
    import procstat
    if is_begin:
        procstat.begin(state)
    else:
        procstat.end(state)


def _run_parallel(fn, root, ndirs, nfiles, nproc):
    """Runs fn over all dirs in nproc processes.

    Returns (items done, elapsed seconds). Workers send their counts
    through a pipe (one short line each, atomic).
    """
    shares = [list(range(p, ndirs, nproc)) for p in range(nproc)]
    _probe(True)
    deadline = _deadline()
    start = time.monotonic()
    if nproc == 1:
        done = fn(root, shares[0], ndirs, nfiles, deadline)
        elapsed = time.monotonic() - start
        _probe(False)
        return done, elapsed
    rfd, wfd = os.pipe()
    pids = []
    for share in shares:
        pid = os.fork()
        if pid == 0:
            rc = 0
            os.close(rfd)
            try:
                n = fn(root, share, ndirs, nfiles, deadline)
                os.write(wfd, b"%d\n" % n)
            except Exception as exc:  # report and exit non-zero
                sys.stderr.write("fsops: %s\n" % exc)
                rc = 1
            os._exit(rc)
        pids.append(pid)
    os.close(wfd)
    failed = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            failed += 1
    elapsed = time.monotonic() - start
    _probe(False)
    with os.fdopen(rfd, "rb") as counts:
        done = sum(int(x) for x in counts.read().split())
    if failed:
        raise OSError("%d of %d workers failed" % (failed, nproc))
    return done, elapsed


def cmd_smallfile(op, root, ndirs, nfiles, nproc):
    fn = {"create": _sf_create, "read": _sf_read, "delete": _sf_delete}[op]
    ndirs, nfiles, nproc = int(ndirs), int(nfiles), int(nproc)
    if ndirs < 1 or nfiles < ndirs or nproc < 1:
        raise ValueError("need NFILES >= NDIRS >= 1 and NPROC >= 1")
    if op == "create":
        os.makedirs(root, exist_ok=True)
    done, elapsed = _run_parallel(fn, root, ndirs, nfiles, nproc)
    if op == "delete":
        os.rmdir(root)
    return done, elapsed


def cmd_mkdir(root, n):
    n = int(n)
    os.makedirs(root, exist_ok=True)
    _probe(True)
    deadline = _deadline()
    start = time.monotonic()
    done = 0
    while done < n and not _past(deadline):
        os.mkdir(os.path.join(root, "m%06d" % done))
        done += 1
    elapsed = time.monotonic() - start
    _probe(False)
    return done, elapsed


def cmd_rmdir(root, n):
    n = int(n)
    _probe(True)
    start = time.monotonic()
    for i in range(n):
        os.rmdir(os.path.join(root, "m%06d" % i))
    elapsed = time.monotonic() - start
    _probe(False)
    os.rmdir(root)
    return n, elapsed


def cmd_rename(root, n):
    n = int(n)
    os.makedirs(root, exist_ok=True)
    for i in range(n):
        os.close(os.open(os.path.join(root, "a%06d" % i),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    _probe(True)
    deadline = _deadline()
    start = time.monotonic()
    done = 0
    while done < n and not _past(deadline):
        os.rename(os.path.join(root, "a%06d" % done),
                  os.path.join(root, "b%06d" % done))
        done += 1
    elapsed = time.monotonic() - start
    _probe(False)
    for i in range(n):
        os.unlink(os.path.join(root, "%s%06d" % ("b" if i < done else "a",
                                                 i)))
    os.rmdir(root)
    return done, elapsed


def cmd_gentar(path, nfiles):
    """Writes a source-tree-like tar: 30 top dirs x 10 subdirs x k files.

    Sizes follow a fixed seed (mostly 100 B - 4 KiB, 2 % up to 32 KiB),
    so every run and every machine extracts the same bytes.
    """
    nfiles = int(nfiles)
    per_leaf = max(1, nfiles // 300)
    rng = random.Random(20240601)
    block = bytes(rng.randrange(32, 127) for _ in range(1 << 17))
    mtime = 1700000000
    entries = 0
    tmp = path + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as tar:
        def add_dir(name):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            info.mtime = mtime
            tar.addfile(info)

        add_dir("tree")
        entries += 1
        for top in range(30):
            tname = "tree/mod%02d" % top
            add_dir(tname)
            entries += 1
            for sub in range(10):
                sname = "%s/sub%d" % (tname, sub)
                add_dir(sname)
                entries += 1
                for f in range(per_leaf):
                    if rng.random() < 0.02:
                        size = rng.randrange(4096, 32768)
                    else:
                        size = rng.randrange(100, 4096)
                    off = rng.randrange(0, len(block) - size)
                    info = tarfile.TarInfo("%s/file%03d.c" % (sname, f))
                    info.size = size
                    info.mode = 0o644
                    info.mtime = mtime
                    tar.addfile(info, io.BytesIO(block[off:off + size]))
                    entries += 1
    os.rename(tmp, path)
    return entries, os.path.getsize(path)


def _unescape_mount_field(s):
    # /proc/mounts escapes space, tab, newline and backslash as \ooo.
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and s[i + 1:i + 4].isdigit() and i + 4 <= len(s):
            out.append(chr(int(s[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def mount_of(d):
    """(fstype, source, mount point) of the mount that holds d."""
    path = os.path.realpath(d)
    best = ("?", "?", "")
    with open("/proc/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) < 3:
                continue
            source, mnt, fstype = (_unescape_mount_field(fields[0]),
                                   _unescape_mount_field(fields[1]),
                                   fields[2])
            inside = (path == mnt or mnt == "/"
                      or path.startswith(mnt.rstrip("/") + "/"))
            # Later lines win on equal length: they are mounted on top.
            if inside and len(mnt) >= len(best[2]):
                best = (fstype, source, mnt)
    return best


def cmd_label(d):
    fstype, source, _mnt = mount_of(d)
    return fstype, source


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd.startswith("smallfile-") and len(args) == 4:
            count, secs = cmd_smallfile(cmd[len("smallfile-"):], *args)
        elif cmd in ("mkdir", "rmdir", "rename") and len(args) == 2:
            count, secs = {"mkdir": cmd_mkdir, "rmdir": cmd_rmdir,
                           "rename": cmd_rename}[cmd](*args)
        elif cmd == "gentar" and len(args) == 2:
            count, secs = cmd_gentar(*args)
        elif cmd == "label" and len(args) == 1:
            fstype, source = cmd_label(args[0])
            print("%s\t%s" % (fstype, source))
            return 0
        else:
            sys.stderr.write("fsops: bad usage: %s\n" % " ".join(argv[1:]))
            return 2
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write("fsops %s: %s\n" % (cmd, exc))
        return 1
    print("%d %.6f" % (count, secs) if isinstance(secs, float)
          else "%d %d" % (count, secs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
