#!/usr/bin/env python3
"""Per-workload cost of a mount's user-space processes, for bench/run.

For a directory on a FUSE mount, bench/run finds the process that serves
the mount (the client: mortarfsd, glusterfs, bindfs...) and the servers
behind it (a Mortar volume's brick mortarfsd processes, a GlusterFS
volume's glusterfsd bricks), and around each timed part takes two
snapshots of them:

  * CPU: utime + stime of /proc/PID/stat (every thread, dead ones too),
    in clock ticks (1/CLK_TCK s, 10 ms here);
  * the client's peak RSS: "5" is written to /proc/PID/clear_refs at
    the start (it resets VmHWM to the current RSS), VmHWM of
    /proc/PID/status is read at the end;
  * for a Mortar client, the FUSE requests it read from the kernel:
    `requests_read` of the mount/fuse section of its statedump (SIGUSR1,
    a dump file in its --dump-dir, doc/statedump.md), read and removed.

The dumps are taken before the CPU snapshot at the start and after it at
the end, so the dump's own work is not counted.

Sub-commands (the process set comes from $BENCH_PROCS, the line `find`
printed; an empty or unset BENCH_PROCS makes begin/end/report no-ops):
  find DIR           "client=PID[,PID] server=PID,... dump=PID:DUMPDIR"
                     for DIR's mount (empty line for a local file system)
  begin STATE        reset peak RSS, snapshot into STATE
  end STATE          snapshot into STATE.end
  report STATE COUNT "<client us/op> <server us/op> <requests/op>
                     <peak RSS MiB>", "-" where not measured

fsops.py calls begin() and end() itself around its own clock
($BENCH_PROBE_STATE), so its untimed setup is not counted.
"""

import json
import os
import signal
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
DEFAULT_DUMP_DIR = "/var/run/mortar"
DUMP_WAIT_S = 10.0


# ------------------------------------------------------------ process set
def _mount_of(d):
    """(fstype, mount point) of the mount that holds d."""
    from fsops import mount_of
    fstype, _source, mnt = mount_of(d)
    return fstype, mnt


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def _holds_dev_fuse(pid):
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "/dev/fuse":
                return True
        except OSError:
            pass
    return False


def _pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def _option(args, name):
    """Value of --name=V or --name V in args, or None."""
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a[len(name) + 1:]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def _read_pid(path):
    try:
        with open(path) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if os.path.exists("/proc/%d" % pid) else None


def _mortar_volume_bricks(mnt, client):
    """Brick pids of a bench/mortar-volume DIR whose DIR/mnt is mnt."""
    vdir = os.path.dirname(mnt)
    if _read_pid(os.path.join(vdir, "client.pid")) != client:
        return []
    try:
        with open(os.path.join(vdir, "bricks.list")) as f:
            names = [line.split()[0] for line in f if line.strip()]
    except OSError:
        return []
    pids = [_read_pid(os.path.join(vdir, n + ".pid")) for n in names]
    return [p for p in pids if p is not None]


def _gluster_bricks(client_args):
    """glusterfsd pids of the client's volume (--volfile-id /VOL)."""
    vol = _option(client_args, "--volfile-id")
    if not vol:
        return []
    vol = vol.lstrip("/")
    out = []
    for pid in _pids():
        args = _cmdline(pid)
        if not args or os.path.basename(args[0]) != "glusterfsd":
            continue
        vid = _option(args, "--volfile-id") or ""
        if vid.startswith(vol + "."):
            out.append(pid)
    return out


def cmd_find(d):
    fstype, mnt = _mount_of(d)
    if not fstype.startswith("fuse"):
        return ""
    mnt = os.path.realpath(mnt)
    me = os.getpid()
    clients = []
    for pid in _pids():
        if pid == me:
            continue
        args = _cmdline(pid)
        if not any(a.startswith("/") and os.path.realpath(a) == mnt
                   for a in args[1:]):
            continue
        if _holds_dev_fuse(pid):
            clients.append((pid, args))
    if not clients:
        return ""
    pid, args = clients[0]
    name = os.path.basename(args[0])
    if name.startswith("lt-"):  # a libtool build tree's binary
        name = name[len("lt-"):]
    servers, dump = [], ""
    if name == "mortarfsd":
        servers = _mortar_volume_bricks(mnt, pid)
        dump = "%d:%s" % (pid, _option(args, "--dump-dir")
                          or DEFAULT_DUMP_DIR)
    elif name in ("glusterfs", "glusterfsd"):
        servers = _gluster_bricks(args)
    parts = ["client=%s" % ",".join(str(p) for p, _ in clients)]
    if servers:
        parts.append("server=%s" % ",".join(str(p) for p in servers))
    if dump:
        parts.append("dump=%s" % dump)
    return " ".join(parts)


def _procs():
    spec = {}
    for part in os.environ.get("BENCH_PROCS", "").split():
        key, _, val = part.partition("=")
        spec[key] = val
    return spec


def _pid_list(s):
    return [int(p) for p in s.split(",") if p]


# -------------------------------------------------------------- snapshots
def _ticks(pid):
    """utime + stime of pid, or None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces: split after its ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def _hwm_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _clear_refs(pid):
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _sum_ticks(pids):
    total = 0
    for pid in pids:
        t = _ticks(pid)
        if t is None:
            return None
        total += t
    return total if pids else None


def _dump_requests(spec):
    """requests_read of a Mortar client's statedump, or None."""
    pid_s, _, dump_dir = spec.partition(":")
    pid = int(pid_s)
    prefix = "mortarfsd.%d.dump." % pid
    try:
        before = {n: os.stat(os.path.join(dump_dir, n)).st_ino
                  for n in os.listdir(dump_dir) if n.startswith(prefix)}
    except OSError:
        before = {}
    try:
        os.kill(pid, signal.SIGUSR1)
    except OSError:
        return None
    deadline = time.monotonic() + DUMP_WAIT_S
    while time.monotonic() < deadline:
        try:
            names = [n for n in os.listdir(dump_dir) if n.startswith(prefix)]
        except OSError:
            names = []
        for n in names:
            path = os.path.join(dump_dir, n)
            try:
                if before.get(n) == os.stat(path).st_ino:
                    continue
                with open(path) as f:
                    text = f.read()
            except OSError:
                continue
            os.unlink(path)
            return _parse_requests(text)
        time.sleep(0.005)
    return None


def _parse_requests(text):
    """requests_read of the [dump X] section of a mount/fuse xlator X."""
    fuse_names, section, found = set(), None, None
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if (section and section.startswith("xlator ")
                and line == "type=mount/fuse"):
            fuse_names.add(section[len("xlator "):])
        elif (section and section.startswith("dump ")
              and section[len("dump "):] in fuse_names
              and line.startswith("requests_read=")):
            found = int(line.split("=", 1)[1])
    return found


def snapshot(state_path, is_begin):
    spec = _procs()
    if not spec.get("client"):
        return
    clients = _pid_list(spec["client"])
    servers = _pid_list(spec.get("server", ""))
    snap = {}
    if is_begin:
        snap["rss_reset"] = all(_clear_refs(p) for p in clients)
        if spec.get("dump"):
            snap["requests"] = _dump_requests(spec["dump"])
    snap["client_ticks"] = _sum_ticks(clients)
    snap["server_ticks"] = _sum_ticks(servers)
    if not is_begin:
        hwm = [_hwm_kib(p) for p in clients]
        snap["hwm_kib"] = None if None in hwm else sum(hwm)
        if spec.get("dump"):
            snap["requests"] = _dump_requests(spec["dump"])
    path = state_path if is_begin else state_path + ".end"
    with open(path, "w") as f:
        json.dump(snap, f)


def begin(state_path):
    snapshot(state_path, True)


def end(state_path):
    snapshot(state_path, False)


def _per_op(a, b, count, scale):
    if a is None or b is None or count <= 0:
        return "-"
    return "%.2f" % ((b - a) * scale / count)


def cmd_report(state_path, count):
    try:
        with open(state_path) as f:
            a = json.load(f)
        with open(state_path + ".end") as f:
            b = json.load(f)
    except (OSError, ValueError):
        return "- - - -"
    count = float(count)
    us = 1e6 / CLK_TCK
    rss = "-"
    if a.get("rss_reset") and b.get("hwm_kib") is not None:
        rss = "%.1f" % (b["hwm_kib"] / 1024.0)
    return " ".join([
        _per_op(a.get("client_ticks"), b.get("client_ticks"), count, us),
        _per_op(a.get("server_ticks"), b.get("server_ticks"), count, us),
        _per_op(a.get("requests"), b.get("requests"), count, 1),
        rss])


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    cmd, args = (argv[1], argv[2:]) if len(argv) >= 2 else ("", [])
    try:
        if cmd == "find" and len(args) == 1:
            print(cmd_find(args[0]))
        elif cmd == "begin" and len(args) == 1:
            begin(args[0])
        elif cmd == "end" and len(args) == 1:
            end(args[0])
        elif cmd == "report" and len(args) == 2:
            print(cmd_report(*args))
        else:
            sys.stderr.write(__doc__)
            return 2
    except (OSError, ValueError) as exc:
        sys.stderr.write("procstat %s: %s\n" % (cmd, exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
