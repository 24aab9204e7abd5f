#!/usr/bin/env python3
"""`make bench`: every workload natively, under detrun, and under `strace -f` (the cost floor
of a ptrace tracer, for scale), interleaved A B A B in one run.

    python3 bench/bench.py [--build build] [--quick] [--only SUBSTR ...] [--modes detrun,...]
                           [--out-dir bench] [--no-install]

For each workload it reports the median wall time, the ratio to native (median / native
median, and fastest and slowest run / native median) and peak memory; for servers,
requests/s and latency (wrk; PostgreSQL: pgbench's tps and latency), and under "record"
the offline replay of each server run timed against its recording. It prints a table on stdout (progress goes to stderr) and
writes bench/results.json and bench/results.png. A mode is one entry of Bench.all_modes;
"record" is included only when `detrun record --help` succeeds. Every run is bounded by a
timeout; a run that fails, hangs, leaves processes behind or prints something other than
the native run is recorded as failed, with its error, and never stops the harness.

Peak memory: `peak RSS` is the largest resident set of any single process of the run (what
`/usr/bin/time -f %M` reports): the maximum of time's getrusage of the reaped children and
of VmHWM sampled from /proc over the process tree (every 10 ms for the first second, then
every 50 ms). Sampling is needed because a group run under detrun is not reaped by
detrun's parent, so getrusage alone sees only detrun itself. `tree RSS` is the largest
sampled sum of VmRSS over the tree, the tracer included (a short-lived process can be
missed).
"""
import argparse
import datetime
import json
import os
import platform
import random
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TIME = "/usr/bin/time"
LIVE = set()  # Runs not yet reaped: killed if the harness is interrupted


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- packages

def dpkg_installed(pkg):
    return subprocess.run(["dpkg", "-s", pkg], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def python_with_matplotlib():
    """An interpreter that can import matplotlib, or None."""
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.path.exists(exe) and subprocess.run(
                [exe, "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            return exe
    return None


def ensure_packages(pkgs):
    """Installs the Debian packages that are missing (apt-get update once, only then).
    Returns the set of packages still missing afterwards."""
    missing = [p for p in pkgs if not dpkg_installed(p)]
    if not missing:
        return set()
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        log(f"bench: missing packages {' '.join(missing)} and cannot install them (not root or no apt-get)")
        return set(missing)
    log(f"bench: installing {' '.join(missing)} (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, stdout=subprocess.DEVNULL)
    r = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        log("bench: apt-get install failed: " + r.stderr.strip()[-500:])
    return {p for p in missing if not dpkg_installed(p)}


# ----------------------------------------------------------------------------- processes

def read_file(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def proc_stat(pid):
    """(comm, state, ppid, session) of a process, or None."""
    s = read_file(f"/proc/{pid}/stat")
    if not s:
        return None
    r = s.rfind(")")
    fields = s[r + 2:].split()
    return s[s.find("(") + 1:r], fields[0], int(fields[1]), int(fields[3])


def children(pid):
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        s = read_file(f"/proc/{pid}/task/{tid}/children")
        if s:
            out.extend(int(x) for x in s.split())
    return out


def tree(pid):
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.append(p)
            todo.extend(children(p))
    return seen


def session_members(sid):
    """Live (non-zombie) processes of session sid, found by a full /proc scan."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != sid:
            st = proc_stat(name)
            if st and st[3] == sid and st[1] != "Z":
                out.append((int(name), st[0]))
    return out


def mem_kb(pid):
    """(VmHWM, VmRSS) in kB."""
    s = read_file(f"/proc/{pid}/status") or ""
    hwm = re.search(r"^VmHWM:\s+(\d+)", s, re.M)
    rss = re.search(r"^VmRSS:\s+(\d+)", s, re.M)
    return (int(hwm.group(1)) if hwm else 0, int(rss.group(1)) if rss else 0)


class Run:
    """One process tree started in its own session, timed and memory-sampled. The program
    runs under /usr/bin/time, a small process: getrusage of a child forked straight from
    this Python would include Python's own peak RSS (ru_maxrss survives fork and exec)."""

    def __init__(self, argv, cwd=None, stdout=None, stderr=None):
        self.argv = argv
        self.hwm_kb = 0
        self.tree_rss_kb = 0
        self.status = None      # like the shell's $?: exit status, or 128+N if killed by signal N
        self.signal = None
        self.ru_maxrss_kb = 0
        self.done = threading.Event()
        self.timed_out = False
        self.leftovers = []
        fd, self.rusage_file = tempfile.mkstemp(prefix="rusage-")
        os.close(fd)
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen([TIME, "-f", "%x %M", "-o", self.rusage_file, *argv], cwd=cwd,
                                  stdin=subprocess.DEVNULL, stdout=stdout or subprocess.DEVNULL,
                                  stderr=stderr or subprocess.DEVNULL, start_new_session=True)
        self.pid = self.p.pid   # the time process; the program is its only child
        LIVE.add(self)
        self._prog = None
        threading.Thread(target=self._wait, daemon=True).start()
        threading.Thread(target=self._sample, daemon=True).start()

    def _wait(self):
        _, status, _ = os.wait4(self.pid, 0)
        self.wall = time.perf_counter() - self.t0
        self.p.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait
        self.status = self.p.returncode
        text = read_file(self.rusage_file) or ""
        os.unlink(self.rusage_file)
        m = re.search(r"terminated by signal (\d+)", text)
        if m:
            self.signal = int(m.group(1))
        m = re.search(r"^(\d+) (\d+)\s*$", text, re.M)
        if m:
            self.ru_maxrss_kb = int(m.group(2))
        self.done.set()
        LIVE.discard(self)

    def prog_pid(self):
        """The program's pid (the child of time), or None if it is not (or no longer) there."""
        if self._prog is None:
            kids = children(self.pid)
            self._prog = kids[0] if kids else None
        return self._prog

    def _sample(self):
        # Every 10 ms for the first second (short runs), then every 50 ms.
        while not self.done.wait(0.01 if time.perf_counter() - self.t0 < 1 else 0.05):
            total = 0
            for pid in tree(self.pid)[1:]:  # not time itself
                hwm, rss = mem_kb(pid)
                self.hwm_kb = max(self.hwm_kb, hwm)
                total += rss
            self.tree_rss_kb = max(self.tree_rss_kb, total)

    def signal_tree(self, sig):
        for pid in tree(self.pid) + [p for p, _ in session_members(self.pid)]:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def wait(self, timeout):
        """Waits for the top process; on timeout kills the whole tree (SIGKILL)."""
        if not self.done.wait(timeout):
            self.timed_out = True
            self.signal_tree(signal.SIGKILL)
            self.done.wait(30)
        self.reap_leftovers()
        return self.done.is_set()

    def reap_leftovers(self):
        """Anything of the session still alive after the top process is gone is reported
        and killed (after a short grace period for processes already dying)."""
        deadline = time.monotonic() + 2
        left = session_members(self.pid)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = session_members(self.pid)
        if left:
            self.leftovers = [f"{comm}[{pid}]" for pid, comm in left]
            for pid, _ in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 5
            while session_members(self.pid) and time.monotonic() < deadline:
                time.sleep(0.05)

    @property
    def peak_rss_kb(self):
        return max(self.hwm_kb, self.ru_maxrss_kb)


def tail(path, n=400):
    s = read_file(path) or ""
    s = s.strip()
    return s[-n:] if len(s) > n else s


# ----------------------------------------------------------------------------- statistics

def median(xs):
    return statistics.median(xs) if xs else None


def summarize(samples, native_samples, higher_is_worse=True):
    """median, min, max of samples; ratio = median / native median, with ratio_min and
    ratio_max = the best and worst sample of the mode against the native median. For
    throughputs (higher_is_worse=False) the ratio is native / mode: a slowdown as well."""
    good = [s for s in samples if s is not None]
    out = {"median": median(good), "min": min(good) if good else None,
           "max": max(good) if good else None}
    nat = median([s for s in native_samples if s is not None])
    if good and nat:
        if higher_is_worse:
            out["ratio"], out["ratio_min"], out["ratio_max"] = (
                median(good) / nat, min(good) / nat, max(good) / nat)
        elif min(good) > 0:
            out["ratio"], out["ratio_min"], out["ratio_max"] = (
                nat / median(good), nat / max(good), nat / min(good))
    return out


# ----------------------------------------------------------------------------- inputs

def make_bmp(path, width, height, seed=1):
    data = random.Random(seed).randbytes(width * height * 3)
    hdr = b"BM" + struct.pack("<IHHI", 54 + len(data), 0, 0, 54) + struct.pack(
        "<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    with open(path, "wb") as f:
        f.write(hdr)
        f.write(data)


def make_text(path, words, seed=2):
    r = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(r.choice(letters) for _ in range(r.randint(2, 10))) for _ in range(20000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]  # Zipf-like
    with open(path, "w") as f:
        left = words
        while left > 0:
            chunk = r.choices(vocab, weights, k=min(left, 240000))
            left -= len(chunk)
            f.write("\n".join(" ".join(chunk[i:i + 12]) for i in range(0, len(chunk), 12)))
            f.write("\n")


def make_c_project(dirname, units, funcs=40):
    """units generated C files (plus main.c) and a Makefile with a clean target."""
    os.makedirs(dirname, exist_ok=True)
    for i in range(units):
        body = []
        for j in range(funcs):
            body.append(f"""
static double f{j}(double *v, int n)
{{
	double s = {j}.0;
	for (int k = 0; k < n; k++) {{
		s += v[k] * {j + 1} - (k % {j + 3}) * 0.5;
		if (s > 1e9)
			s /= {j + 2}.0;
		v[k] = s * 0.25 + k;
	}}
	return s;
}}""")
        calls = " + ".join(f"f{j}(v, n)" for j in range(funcs))
        with open(os.path.join(dirname, f"unit{i:02d}.c"), "w") as f:
            f.write("#include <stdio.h>\n" + "\n".join(body) +
                    f"\ndouble unit{i:02d}(double *v, int n) {{ return {calls}; }}\n")
    decls = "\n".join(f"double unit{i:02d}(double *v, int n);" for i in range(units))
    calls = "\n".join(f"\ts += unit{i:02d}(v, 64);" for i in range(units))
    with open(os.path.join(dirname, "main.c"), "w") as f:
        f.write(f"#include <stdio.h>\n{decls}\nint main(void)\n{{\n\tdouble v[64] = {{0}}, s = 0;\n"
                f"{calls}\n\tprintf(\"%g\\n\", s);\n\treturn 0;\n}}\n")
    objs = " ".join([f"unit{i:02d}.o" for i in range(units)] + ["main.o"])
    with open(os.path.join(dirname, "Makefile"), "w") as f:
        f.write(f"CC = gcc\nCFLAGS = -O2\nOBJS = {objs}\n\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\n"
                f"%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n\nclean:\n\trm -f prog $(OBJS)\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def http_get(port, path, timeout=10):
    """(status, body length) of one GET with Connection: close."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d+)", head)
    return (int(m.group(1)) if m else None, len(body))


# ----------------------------------------------------------------------------- workloads

class Batch:
    """A program run to completion; its stdout must equal the native run's."""
    kind = "batch"

    def __init__(self, name, group, argv, desc, setup=None, before=None, cwd=None, cap=None):
        self.name, self.group, self.argv, self.desc = name, group, argv, desc
        self.setup, self.before, self.cwd, self.cap = setup, before, cwd, cap


class Micro:
    """syscall_micro KIND N, also with N=0 to subtract start-up: cost per call."""
    kind = "micro"

    def __init__(self, sc, iters, calls_per_iter, note):
        self.sc, self.iters, self.calls = sc, iters, iters * calls_per_iter
        self.name, self.group, self.note = f"micro {sc}", "syscall micro", note
        self.desc = f"syscall_micro {sc} {iters}: {note}"


class Server:
    """A server started per repetition and mode, driven by wrk for each path. The hooks
    (ready, drive, still_serving, reset_for_replay) are what a server of another kind
    (PgServer) replaces; Bench.serve_once does the rest: start, stop, leftovers, replay."""
    kind = "server"
    client = "wrk"

    def __init__(self, name, desc, argv, setup, paths):
        self.name, self.group, self.desc = name, "server", desc
        self.argv, self.setup, self.paths = argv, setup, paths

    def ready(self, port, prefix):
        return port_open(port)

    def drive(self, bench, port, prefix, r):
        """Checks one answer, then runs the load for each path: {path: wrk result}."""
        status, length = http_get(port, self.paths[0])
        if status != 200:
            raise RuntimeError(f"GET {self.paths[0]} answered status {status}")
        out = {}
        for p in self.paths:
            out[p] = bench.wrk(port, p)
            if r.done.is_set():
                raise RuntimeError(f"server exited with status {r.status} during wrk")
        return out

    def still_serving(self, port, prefix):
        return f"port {port} still accepting after stop" if port_open(port) else None

    def reset_for_replay(self, prefix):
        """Removes what the recorded run created that its start would find in its way
        (a replay starts from the files the recording started from)."""
        for made in ("nginx.pid",):
            if os.path.exists(f"{prefix}/{made}"):
                os.unlink(f"{prefix}/{made}")
        if os.path.isdir(f"{prefix}/tmp"):
            for name in os.listdir(f"{prefix}/tmp"):
                shutil.rmtree(f"{prefix}/tmp/{name}", ignore_errors=True)


PG_PORT = "5499"  # names the unix socket file only (listen_addresses is empty: no TCP)


def pg_bin():
    """The newest installed PostgreSQL's bin directory, or None."""
    import glob
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


def as_postgres(argv):
    """The server refuses to run as root: PostgreSQL's programs run as the postgres user."""
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *argv]


def parse_pgbench(out):
    res = {}
    m = re.search(r"^tps = ([\d.]+) \(without initial connection time\)", out, re.M)
    done = re.search(r"^number of transactions actually processed: 0\b", out, re.M)
    if not m and done:
        return {"error": "no transaction finished in the run's duration (pgbench -T)"}
    if not m:
        return {"error": "cannot parse pgbench output: " + out.strip()[-300:]}
    res["rps"] = float(m.group(1))
    m = re.search(r"^latency average = ([\d.]+) ms", out, re.M)
    if m:
        res["lat_avg_us"] = float(m.group(1)) * 1e3
    m = re.search(r"^number of transactions actually processed: (\d+)", out, re.M)
    if m:
        res["requests"] = int(m.group(1))
    m = re.search(r"^number of failed transactions: (\d+)", out, re.M)
    if m and int(m.group(1)):
        res["error"] = f"{m.group(1)} failed transactions"
    return res


class PgServer(Server):
    """PostgreSQL (Debian's package) started per repetition and mode from a copy of one
    natively made cluster, listening on a unix socket only; ready when pg_isready says so.
    The load is `pgbench -i` (scale 1) then `pgbench -c 4 -T SECONDS` (the wrk duration, at
    least 5 s), both native, over the
    socket; throughput is pgbench's tps (shown in the req/s column), latency its average. A
    pgbench that does not finish within SECONDS + 30 s is killed and the run reported hung."""
    client = "pgbench"

    def __init__(self, bench, pgdir):
        super().__init__("pgbench", "PostgreSQL server (postmaster + a backend per client), "
                         "unix socket, pgbench -c 4 TPC-B-like", self.server_argv, self.setup,
                         ["-c4 tps"])
        self.bench, self.bin, self.pgdir = bench, pgdir, None

    def server_argv(self, port, prefix):
        return as_postgres([f"{self.bin}/postgres", "-D", f"{prefix}/data", "-k", f"{prefix}/sock",
                            "-p", PG_PORT, "-c", "listen_addresses="])

    def template(self):
        """initdb once, natively, into a template every run copies."""
        if self.pgdir is None:
            d = f"{self.bench.tmp}/pg-template"
            os.chmod(self.bench.tmp, 0o711)  # the postgres user must reach its directories
            os.makedirs(d)
            shutil.chown(d, "postgres", "postgres")
            r = subprocess.run(as_postgres([f"{self.bin}/initdb", "-D", f"{d}/data", "-A", "trust",
                                            "-U", "postgres", "--no-sync", "--no-instructions"]),
                               capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                raise RuntimeError("initdb failed: " + (r.stderr or r.stdout).strip()[-300:])
            self.pgdir = d
        return self.pgdir

    def setup(self, port):
        prefix = tempfile.mkdtemp(prefix="pg-", dir=self.bench.tmp)
        subprocess.run(["cp", "-a", f"{self.template()}/data", f"{prefix}/data"], check=True)
        os.makedirs(f"{prefix}/sock")
        for d in (prefix, f"{prefix}/sock"):
            shutil.chown(d, "postgres", "postgres")
        return prefix

    def ready(self, port, prefix):
        if not os.path.exists(f"{prefix}/sock/.s.PGSQL.{PG_PORT}"):
            return False
        return subprocess.run([f"{self.bin}/pg_isready", "-q", "-h", f"{prefix}/sock", "-p", PG_PORT],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0

    def pgbench(self, prefix, args, timeout):
        cmd = [f"{self.bin}/pgbench", "-h", f"{prefix}/sock", "-p", PG_PORT, "-U", "postgres",
               *args, "postgres"]
        with tempfile.TemporaryFile() as out:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                return None, f"pgbench {' '.join(args)} hung: killed after {timeout:.0f} s"
            out.seek(0)
            text = out.read().decode("utf-8", "replace")
        if p.returncode != 0:
            return None, f"pgbench {' '.join(args)} exit {p.returncode}: {text.strip()[-300:]}"
        return text, None

    def drive(self, bench, port, prefix, r):
        secs = max(bench.wrk_seconds, 5)  # under record a transaction can take a second
        text, err = self.pgbench(prefix, ["-i", "-q", "-s", "1"], 120 if bench.quick else 300)
        if err:
            raise RuntimeError(err)
        text, err = self.pgbench(prefix, ["-c", "4", "-T", str(secs)], secs + 30)
        if err:
            raise RuntimeError(err)
        return {self.paths[0]: parse_pgbench(text)}

    def still_serving(self, port, prefix):
        sock = f"{prefix}/sock/.s.PGSQL.{PG_PORT}"
        return f"{sock} still there after stop" if os.path.exists(sock) else None

    def reset_for_replay(self, prefix):
        """Back to the cluster the recording started from (pgbench -i changed it)."""
        shutil.rmtree(f"{prefix}/data")
        subprocess.run(["cp", "-a", f"{self.template()}/data", f"{prefix}/data"], check=True)
        for name in os.listdir(f"{prefix}/sock"):
            os.unlink(f"{prefix}/sock/{name}")


class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.build = os.path.abspath(args.build)
        self.detrun = os.path.join(self.build, "detrun")
        self.bin = os.path.join(self.build, "bench")
        self.tmp = tempfile.mkdtemp(prefix="detrun-bench-")
        q = self.quick
        # Repetitions per kind of workload; each repetition runs every mode once (A B A B).
        self.reps = {"batch": 2 if q else 5, "micro": 2 if q else 5, "server": 1 if q else 3}
        self.cap = 30 if q else 600          # longest a single run may take, seconds
        self.wrk_seconds = 2 if q else 5
        self.results = []
        self.modes = []
        self.skipped_modes = {}
        self.stop_via = {}

    # --- modes: one entry each: name, prefix(tag) -> the words put before the program,
    # probe() -> None if the mode can run here (else why not), and which process a server
    # is stopped through: "top" = SIGTERM to the command itself (detrun forwards it to the
    # group), "tracee" = to the tracer's child (strace -o FILE blocks fatal signals, -I3).
    def all_modes(self):
        rec = lambda tag: [self.detrun, "record", "-o", os.path.join(self.tmp, f"record-{tag}.log"), "--"]
        return [
            ("native", lambda tag: [], None, "top"),
            ("detrun", lambda tag: [self.detrun, "--"], None, "top"),
            ("jobs2", lambda tag: [self.detrun, "--jobs", "2", "--"], None, "top"),
            ("strace", lambda tag: ["strace", "-f", "-o", "/dev/null"], self.probe_strace, "tracee"),
            ("record", rec, self.probe_record, "top"),
            # The spin detector's probe as it was before it learned which pages were written
            # (a digest of all writable memory per look): compute workloads only, to show
            # what the page tracking saves, side by side with "detrun".
            ("digest", lambda tag: ["env", "DETRUN_SPIN_WATCH=digest", self.detrun, "--"],
             None, "top"),
        ]

    def probe_strace(self):
        return None if shutil.which("strace") else "strace is not installed"

    def probe_record(self):
        try:
            r = subprocess.run([self.detrun, "record", "--help"], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            return "`detrun record --help` timed out"
        if r.returncode == 0:
            return None
        msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
        return f"`detrun record --help` exited {r.returncode}" + (f": {msg[0]}" if msg else "")

    def workloads(self):
        q, b, t = self.quick, self.bin, self.tmp
        big = lambda full, quick: quick if q else full
        n_mat, bmp_h, words = big(1200, 600), big(16384, 2048), big(6_000_000, 1_000_000)
        lock_iters, seq_n, units = big(2_000_000, 500_000), big(1_000_000, 200_000), big(20, 8)
        bmp, text, proj = f"{t}/image.bmp", f"{t}/words.txt", f"{t}/cproject"
        docroot = f"{t}/html"
        return [
            Micro("getppid", big(50000, 25000), 1, "getppid: allowed by detrun's filter (not intercepted)"),
            Micro("clock", big(20000, 5000), 1, "clock_gettime: detrun's vDSO (a stop every 129th read)"),
            Micro("devnull", big(20000, 5000), 1, "write to /dev/null: intercepted, runs natively"),
            Micro("openclose", big(20000, 5000), 2, "openat+close pairs"),
            Micro("pipe", big(5000, 1250), 4, "pipe ping-pong between 2 processes: 4 calls/round"),
            Batch("matmul", "compute threads", [f"{b}/matmul", str(n_mat), "4"],
                  f"{n_mat}x{n_mat} double matrix multiply, 4 pthreads"),
            Batch("histogram", "compute threads", [f"{b}/histogram", bmp, "4"],
                  f"Phoenix histogram of a {4096 * bmp_h * 3 >> 20} MiB 24-bit BMP, 4 pthreads (pread)",
                  setup=lambda: make_bmp(bmp, 4096, bmp_h)),
            Batch("wordcount", "compute threads", [f"{b}/wordcount", text, "4"],
                  f"Phoenix word count of {words // 1000000}M generated words, 4 pthreads (mmap)",
                  setup=lambda: make_text(text, words)),
            Batch("locks", "lock-heavy threads", [f"{b}/locks", "4", str(lock_iters)],
                  f"4 pthreads x {lock_iters} short critical sections on one mutex"),
            Batch("pipeline", "processes", ["sh", "-c", f"seq 1 {seq_n} | sort -n | uniq | wc -l"],
                  f"sh -c 'seq 1 {seq_n} | sort -n | uniq | wc -l'"),
            Batch("4 procs", "processes", [f"{b}/procs", "compute", "4", str(big(400_000_000, 150_000_000))],
                  "4 processes computing without a call, then reporting through one pipe"),
            Batch("hold-back", "processes", [f"{b}/procs", "holdback", str(big(400_000_000, 150_000_000)), "2000"],
                  "one process computes without a call while two pass a byte 2000 times"),
            Batch("make -j2", "processes", ["make", "-s", "-j2", "-C", proj],
                  f"make -j2: gcc -O2 on {units + 1} generated C files + link (cleaned before each run)",
                  setup=lambda: make_c_project(proj, units),
                  before=lambda: subprocess.run(["make", "-s", "-C", proj, "clean"], check=True)),
            Server("nginx", "nginx 1 master + 2 workers, static files (sendfile)",
                   lambda port, prefix: ["nginx", "-e", f"{prefix}/logs/error.log",
                                         "-c", f"{prefix}/nginx.conf", "-p", f"{prefix}/"],
                   self.setup_nginx, ["/10k.bin", "/100k.bin"]),
            Server("httpd", "bench/httpd.c: thread per connection, open+read per request",
                   lambda port, prefix: [f"{b}/httpd", str(port), docroot],
                   None, ["/10k.bin", "/100k.bin"]),
            *self.pg_workloads(),
        ]

    def pg_workloads(self):
        return [PgServer(self, pg_bin())]

    def missing_for(self, w):
        """Why a server workload cannot run here, or None."""
        if w.kind != "server":
            return None
        if w.client == "wrk" and (not shutil.which("wrk") or
                                  (w.name == "nginx" and not shutil.which("nginx"))):
            return "nginx or wrk not installed"
        if w.client == "pgbench":
            import pwd
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                return "no postgres user (Debian package postgresql)"
            if not w.bin or not shutil.which("setpriv"):
                return "PostgreSQL or setpriv not installed (Debian packages postgresql, util-linux)"
        return None

    def make_docroot(self):
        d = f"{self.tmp}/html"
        os.makedirs(d, exist_ok=True)
        r = random.Random(3)
        for name, size in (("10k.bin", 10 * 1024), ("100k.bin", 100 * 1024)):
            with open(f"{d}/{name}", "wb") as f:
                f.write(r.randbytes(size))
        return d

    def setup_nginx(self, port):
        """A fresh prefix for each start: config from bench/nginx.conf, logs, temp dirs."""
        prefix = tempfile.mkdtemp(prefix="nginx-", dir=self.tmp)
        for sub in ("logs", "tmp"):
            os.makedirs(f"{prefix}/{sub}")
        os.symlink(f"{self.tmp}/html", f"{prefix}/html")
        with open(f"{HERE}/nginx.conf") as f:
            conf = f.read()
        conf = (conf.replace("@PORT@", str(port)).replace("@PREFIX@", prefix)
                .replace("@WORKERS@", "2").replace("@MASTER@", "on"))
        with open(f"{prefix}/nginx.conf", "w") as f:
            f.write(conf)
        return prefix

    # --- running
    def run_once(self, argv, timeout, cwd=None, tag="run", merge_output=False):
        out, err = f"{self.tmp}/{tag}.out", f"{self.tmp}/{tag}.err"
        with open(out, "wb") as fo, open(err, "wb") as fe:
            r = Run(argv, cwd=cwd, stdout=fo, stderr=fo if merge_output else fe)
            r.wait(timeout)
        res = {"wall": r.wall if r.done.is_set() else None, "rc": r.status,
               "peak_rss_kb": r.peak_rss_kb, "tree_rss_kb": r.tree_rss_kb}
        res["stdout"] = read_file(out) or ""
        error = None
        if r.timed_out:
            error = f"timed out after {timeout:.0f} s (killed)"
        elif r.signal:
            error = f"killed by signal {r.signal}"
        elif r.status != 0:
            error = f"exit status {r.status}"
        if error:
            e = tail(out if merge_output else err)
            res["error"] = error + (f"; stderr: {e}" if e else "")
        if r.leftovers:
            res["leftovers"] = r.leftovers
            res["error"] = (res["error"] + "; " if "error" in res else "") + \
                "left processes running (killed): " + " ".join(r.leftovers)
        for path in (out, err):
            os.unlink(path)
        return res

    def record_log_bytes(self, tag):
        path = os.path.join(self.tmp, f"record-{tag}.log")
        if os.path.exists(path):
            size = os.path.getsize(path)
            os.unlink(path)
            return size
        return None

    COMPUTE_ONLY = ("digest",)  # modes run on the "compute threads" workloads alone

    def modes_for(self, w):
        return [(m, p) for m, p in self.modes
                if m not in self.COMPUTE_ONLY or w.group == "compute threads"]

    def run_batch(self, w):
        if w.setup:
            w.setup()
        reps = self.reps["batch"]
        if w.before:
            w.before()
        warm = self.run_once(w.argv, self.cap, cwd=w.cwd, tag="warmup")  # also the time base
        if "error" in warm:
            return {"error": "native warm-up run failed: " + warm["error"]}
        timeout = min(self.cap, max(30.0, 50 * warm["wall"]))
        modes = self.modes_for(w)
        runs = {m: [] for m, _ in modes}
        dead = {}
        for rep in range(reps):
            for mode, prefix in modes:
                if mode in dead:
                    runs[mode].append(None)
                    continue
                if w.before:
                    w.before()
                tag = f"{w.name.split()[0]}-{mode}-{rep}"
                res = self.run_once(prefix(tag) + w.argv, timeout, cwd=w.cwd, tag=tag)
                if mode == "record":
                    res["record_log_bytes"] = self.record_log_bytes(tag)
                nat = runs["native"][-1] if runs["native"] else None
                if "error" not in res and mode != "native" and nat and "error" not in nat and \
                        res["stdout"] != nat["stdout"]:
                    res["error"] = ("output differs from native: " + res["stdout"].strip()[:200] +
                                    " vs " + runs["native"][-1]["stdout"].strip()[:200])
                runs[mode].append(res)
                self.progress(w, mode, rep, res)
                if "timed out" in res.get("error", ""):
                    dead[mode] = True
        return self.summarize_runs(runs, "wall", timeout)

    def progress(self, w, mode, rep, res, what=""):
        if "error" in res:
            log(f"  {w.name:12} {mode:7} rep {rep + 1}{what}: FAILED {res['error'][:300]}")
        elif "rps" in res:
            log(f"  {w.name:12} {mode:7} rep {rep + 1}{what}: {res['rps']:.0f} req/s, "
                f"latency {res.get('lat_avg_us', 0) / 1e3:.2f} ms"
                + (f"  WARNING {res['warning'][:300]}" if "warning" in res else ""))
        else:
            log(f"  {w.name:12} {mode:7} rep {rep + 1}{what}: {res.get('wall') or 0:.3f} s")

    def summarize_runs(self, runs, key, timeout):
        out = {"timeout_s": timeout, "modes": {}}
        native = [r.get(key) if r and "error" not in r else None for r in runs["native"]]
        for mode, rs in runs.items():
            vals = [r.get(key) if r and "error" not in r else None for r in rs]
            errs = [r["error"] for r in rs if r and "error" in r]
            ran = [r for r in rs if r]
            s = summarize(vals, native)
            s["runs"] = [{k: v for k, v in r.items() if k != "stdout"} if r else None for r in rs]
            s["failed"] = len(errs)
            s["attempted"] = len(ran)
            s["status"] = "ok" if not errs else ("failed" if len(errs) == len(ran) else "partial")
            if errs:
                s["error"] = errs[0]
            rss = [r["peak_rss_kb"] for r in ran if r.get("peak_rss_kb")]
            trss = [r["tree_rss_kb"] for r in ran if r.get("tree_rss_kb")]
            s["peak_rss_kb"] = max(rss) if rss else None
            s["tree_rss_kb"] = max(trss) if trss else None
            logs = [r["record_log_bytes"] for r in ran if r.get("record_log_bytes")]
            if logs:
                s["record_log_bytes"] = max(logs)
            out["modes"][mode] = s
        return out

    def run_micro(self, w):
        reps = self.reps["micro"]
        micro = os.path.join(self.bin, "syscall_micro")
        modes = self.modes_for(w)
        runs = {(m, n): [] for m, _ in modes for n in (w.iters, 0)}
        timeout = 30 if self.quick else 120
        dead = {}
        for rep in range(reps):
            for mode, prefix in modes:
                for n in (w.iters, 0):
                    if mode in dead:
                        runs[(mode, n)].append(None)
                        continue
                    tag = f"micro-{mode}-{rep}-{n}"
                    res = self.run_once(prefix(tag) + [micro, w.sc, str(n)], timeout, tag=tag)
                    if mode == "record":
                        self.record_log_bytes(tag)
                    runs[(mode, n)].append(res)
                    if "error" in res:
                        self.progress(w, mode, rep, res)
                        if "timed out" in res["error"]:
                            dead[mode] = True
        out = {"timeout_s": timeout, "iterations": w.iters, "calls": w.calls, "modes": {}}

        def per_call(mode):
            base = median([r["wall"] for r in runs[(mode, 0)] if r and "error" not in r])
            if base is None:
                return [None] * reps
            return [max(0.0, r["wall"] - base) / w.calls * 1e6 if r and "error" not in r else None
                    for r in runs[(mode, w.iters)]]

        native = per_call("native")
        for mode, _ in modes:
            pc = per_call(mode)
            s = summarize(pc, native)
            s["samples"] = pc  # per repetition, for pairing modes (bench/compare.py)
            s["us_per_call"] = s.pop("median")
            s["us_min"], s["us_max"] = s.pop("min"), s.pop("max")
            walls = [r["wall"] for r in runs[(mode, w.iters)] if r and "error" not in r]
            s["wall_median"] = median(walls)
            s["startup_s"] = median([r["wall"] for r in runs[(mode, 0)] if r and "error" not in r])
            ran = [r for n in (w.iters, 0) for r in runs[(mode, n)] if r]
            errs = [r["error"] for r in ran if "error" in r]
            s["attempted"], s["failed"] = len(ran), len(errs)
            s["status"] = "ok" if not errs else ("failed" if len(errs) == len(ran) else "partial")
            if errs:
                s["error"] = errs[0]
            rss = [r["peak_rss_kb"] for r in ran if r.get("peak_rss_kb")]
            s["peak_rss_kb"] = max(rss) if rss else None
            log(f"  {w.name:12} {mode:7} {s['us_per_call'] if s['us_per_call'] is not None else float('nan'):.3f} us/call")
            out["modes"][mode] = s
        return out

    def wrk(self, port, path):
        cmd = ["wrk", "-t2", "-c8", f"-d{self.wrk_seconds}s", "--latency", "--timeout", "10s",
               f"http://127.0.0.1:{port}{path}"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=self.wrk_seconds + 60)
        except subprocess.TimeoutExpired:
            return {"error": "wrk timed out"}
        if r.returncode != 0:
            return {"error": f"wrk exit {r.returncode}: {r.stderr.strip()[:300]}"}
        return parse_wrk(r.stdout)

    def run_server(self, w):
        if self.docroot is None:
            self.docroot = self.make_docroot()
        reps = self.reps["server"]
        modes = self.modes_for(w)
        runs = {(m, p): [] for m, _ in modes for p in w.paths}
        procs = {m: [] for m, _ in modes}
        start_timeout = 15 if self.quick else 60
        for rep in range(reps):
            for mode, prefix in modes:
                tag = f"{w.name}-{mode}-{rep}"
                res = self.serve_once(w, mode, prefix(tag), tag, start_timeout)
                if mode == "record":
                    res["replay"] = self.replay_server(w, tag, res)
                    res["record_log_bytes"] = self.record_log_bytes(tag)
                procs[mode].append(res)
                for p in w.paths:
                    one = dict(res.get("paths", {}).get(p) or {})
                    if "error" in res:
                        one.setdefault("error", res["error"])
                    for k in ("warning", "error"):
                        if k in one and res.get("server_log") and "server output" not in one[k]:
                            one[k] += f"; server output: {res['server_log']}"
                    runs[(mode, p)].append(one)
                    self.progress(w, mode, rep, one, what=f" {p}")
        out = {"paths": {}, "server": {}}
        if w.client == "wrk":
            out["wrk"] = f"-t2 -c8 -d{self.wrk_seconds}s"
        else:
            out["pgbench"] = f"-i -s 1, then -c 4 -T {max(self.wrk_seconds, 5)}"
        for p in w.paths:
            native_rps = [r.get("rps") if "error" not in r else None for r in runs[("native", p)]]
            native_lat = [r.get("lat_avg_us") if "error" not in r else None for r in runs[("native", p)]]
            per_mode = {}
            for mode, _ in modes:
                rs = runs[(mode, p)]
                rps = [r.get("rps") if "error" not in r else None for r in rs]
                lat = [r.get("lat_avg_us") if "error" not in r else None for r in rs]
                p99 = [r.get("lat_p99_us") for r in rs if "error" not in r and r.get("lat_p99_us")]
                s = {"rps": summarize(rps, native_rps, higher_is_worse=False),
                     "lat_avg_us": summarize(lat, native_lat),
                     "lat_p99_us": median(p99),
                     "runs": rs}
                errs = [r["error"] for r in rs if "error" in r]
                warns = [r["warning"] for r in rs if "warning" in r and "error" not in r]
                s["attempted"], s["failed"] = len(rs), len(errs)
                s["status"] = "ok" if not errs else ("failed" if len(errs) == len(rs) else "partial")
                if errs:
                    s["error"] = errs[0]
                if warns:
                    s["warnings"] = warns
                    if s["status"] == "ok":
                        s["status"] = "warn"
                per_mode[mode] = s
            out["paths"][p] = per_mode
        for mode, _ in modes:
            rs = procs[mode]
            out["server"][mode] = {
                "peak_rss_kb": max([r.get("peak_rss_kb") or 0 for r in rs] or [0]) or None,
                "tree_rss_kb": max([r.get("tree_rss_kb") or 0 for r in rs] or [0]) or None,
                "runs": [{k: v for k, v in r.items() if k not in ("paths", "output")} for r in rs]}
            replays = [r["replay"] for r in rs if "replay" in r]
            if replays:
                out["server"][mode]["replays"] = replays
        return out

    def replay_server(self, w, tag, rec):
        """Replays the log of one recorded server run offline (`unshare -n detrun replay`,
        in the recording's directory, after w.reset_for_replay) and times it against the
        recording: its wall time from start to exit, and the part of it in which clients
        kept the server busy (driven_s). The replay must print what the recording printed."""
        log_file = os.path.join(self.tmp, f"record-{tag}.log")
        out = {}
        if "error" in rec or not os.path.exists(log_file):
            out["error"] = "recording failed: not replayed"
            return out
        w.reset_for_replay(rec["prefix"])
        timeout = min(600.0, max(60.0, 10 * rec.get("wall_s", 0)))  # a crowded CPU slows it
        argv = ["unshare", "-n", self.detrun, "replay", log_file]
        res = self.run_once(argv, timeout, cwd=rec["prefix"], tag=f"{tag}-replay", merge_output=True)
        out["wall_s"] = res["wall"]
        why = [l for l in res["stdout"].splitlines() if l.startswith("detrun:") and
               ("diverged" in l or "error" in l or "replay" in l)]
        if res.get("rc") == rec.get("exit") and not res.get("leftovers"):
            res.pop("error", None)  # a server stopped by SIGTERM exits 143 in both
        if "error" in res:
            out["error"] = res["error"].split("; stderr:")[0] + (f": {why[0]}" if why else "")
        elif res["stdout"] != rec.get("output"):
            out["error"] = "replay printed other output than the recording: " + res["stdout"].strip()[-300:]
        out["peak_rss_kb"] = res["peak_rss_kb"]
        for k in ("wall_s", "startup_s", "driven_s", "stop_s"):
            if rec.get(k) is not None:
                out[f"recorded_{k}"] = rec[k]
        if out.get("wall_s") and rec.get("wall_s"):
            out["ratio"] = out["wall_s"] / rec["wall_s"]
        log(f"  {w.name:12} replay  {tag}: "
            + (f"FAILED {out['error'][:300]}" if "error" in out else
               f"{out['wall_s']:.2f} s for a recording of {rec['wall_s']:.2f} s "
               f"({rec.get('driven_s', 0):.2f} s of it under load)"))
        return out

    def serve_once(self, w, mode, prefix_words, tag, start_timeout):
        port = free_port()
        prefix = w.setup(port) if w.setup else self.tmp
        log_path = f"{self.tmp}/{tag}.log"
        res = {"port": port}
        with open(log_path, "wb") as lf:
            r = Run(prefix_words + w.argv(port, prefix), cwd=prefix, stdout=lf, stderr=lf)
        try:
            deadline = time.monotonic() + start_timeout
            while not w.ready(port, prefix):
                if r.done.is_set():
                    raise RuntimeError(f"server exited with status {r.status} before listening")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server not accepting after {start_timeout} s")
                time.sleep(0.02)
            res["startup_s"] = time.perf_counter() - r.t0
            res["paths"] = w.drive(self, port, prefix, r)
            res["driven_s"] = time.perf_counter() - r.t0 - res["startup_s"]
        except (RuntimeError, OSError) as e:
            res["error"] = str(e)
        t_stop = time.perf_counter()
        # Stop: SIGTERM to the top process (detrun forwards it to the group), bounded wait,
        # SIGKILL to the whole tree as a last resort; then nothing of the session may remain.
        if not r.done.is_set():
            target = r.prog_pid()
            if target and self.stop_via[mode] == "tracee":
                kids = children(target)
                target = kids[0] if kids else target
            try:
                os.kill(target or r.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if not r.done.wait(15):
                res.setdefault("error", "server did not exit within 15 s of SIGTERM (killed)")
                res["stop"] = "SIGKILL"
                r.signal_tree(signal.SIGKILL)
                r.done.wait(30)
            else:
                res["stop"] = "SIGTERM"
        if r.done.is_set():
            res["wall_s"] = r.wall
            res["stop_s"] = r.t0 + r.wall - t_stop
        r.reap_leftovers()
        if r.leftovers:
            res["error"] = (res["error"] + "; " if "error" in res else "") + \
                "left processes running after stop (killed): " + " ".join(r.leftovers)
            res["leftovers"] = r.leftovers
        serving = w.still_serving(port, prefix)
        if serving:
            res.setdefault("error", serving)
        res["exit"] = r.status
        res["prefix"] = prefix
        if r.signal:
            res["exit_signal"] = r.signal
        res["peak_rss_kb"] = r.peak_rss_kb
        res["tree_rss_kb"] = r.tree_rss_kb
        t = tail(log_path)
        if prefix != self.tmp and os.path.exists(f"{prefix}/logs/error.log"):  # nginx's own log
            e = tail(f"{prefix}/logs/error.log")
            if e:
                t = (t + " | error.log: " + e).strip(" |")
        if "error" in res and t:
            res["error"] += f"; server output: {t}"
        elif t and any("warning" in v or "error" in v for v in res.get("paths", {}).values()):
            res["server_log"] = t
        if mode == "record":
            res["output"] = read_file(log_path) or ""  # what the replay must print again
        os.unlink(log_path)
        return res

    def run(self):
        self.docroot = None
        for name, prefix, probe, stop in self.all_modes():
            self.stop_via[name] = stop
            if self.args.modes and name not in self.args.modes.split(",") and name != "native":
                continue
            why = probe() if probe else None
            if why:
                self.skipped_modes[name] = why
                log(f"bench: mode {name}: skipped ({why})")
            else:
                self.modes.append((name, prefix))
        only = self.args.only
        wls = [w for w in self.workloads() if not only or any(o in w.name for o in only)]
        for w in wls:
            why = self.missing_for(w)
            if why:
                self.results.append({"name": w.name, "group": w.group, "kind": w.kind,
                                     "description": w.desc, "skipped": why})
                continue
            log(f"bench: {w.name} — {w.desc}")
            t0 = time.monotonic()
            try:
                r = {"micro": self.run_micro, "batch": self.run_batch, "server": self.run_server}[w.kind](w)
            except Exception as e:  # a broken workload must not stop the others
                r = {"error": f"harness error: {type(e).__name__}: {e}"}
            r.update(name=w.name, group=w.group, kind=w.kind, description=w.desc,
                     seconds=round(time.monotonic() - t0, 1))
            if w.kind == "batch":
                r["command"] = w.argv
            self.results.append(r)


def parse_wrk(out):
    def us(v, unit):
        return float(v) * {"us": 1, "ms": 1e3, "s": 1e6, "m": 6e7}[unit]
    res = {}
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not m:
        return {"error": "cannot parse wrk output: " + out.strip()[-300:]}
    res["rps"] = float(m.group(1))
    m = re.search(r"Latency\s+([\d.]+)(us|ms|s|m)\s", out)
    if m:
        res["lat_avg_us"] = us(*m.groups())
    for pct in ("50", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M)
        if m:
            res[f"lat_p{pct}_us"] = us(*m.groups())
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+)", out)
    if m:
        res["requests"] = int(m.group(1))
    # Socket errors on up to 1% of the requests are a warning (the numbers stand, the run is
    # flagged); more, or any non-2xx answer, fail the run.
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m and any(int(x) for x in m.groups()):
        msg = "wrk socket errors: " + m.group(0)[len("Socket errors: "):]
        if sum(int(x) for x in m.groups()) * 100 <= res.get("requests", 0):
            res["warning"] = msg + f" (of {res.get('requests')} requests)"
        else:
            res["error"] = msg
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        res["error"] = (res["error"] + "; " if "error" in res else "") + f"{m.group(1)} non-2xx responses"
    return res


# ----------------------------------------------------------------------------- report

def fmt_ratio(s, key="ratio"):
    r = s.get(key)
    if r is None:
        return "-"
    lo, hi = s.get(f"{key}_min"), s.get(f"{key}_max")
    rng = f" [{lo:.2f}-{hi:.2f}]" if lo is not None and hi is not None else ""
    return f"{r:.2f}x{rng}"


def fmt_mb(kb):
    return f"{kb / 1024:.1f} MB" if kb else "-"


def status_text(s):
    """One line: a server's output in an error spans several."""
    return _status_text(s).replace("\n", " | ")


def _status_text(s):
    if s.get("status") == "ok":
        return "ok"
    if s.get("status") == "warn":
        return f"WARN {len(s['warnings'])}/{s.get('attempted')}: {s['warnings'][0][:160]}"
    return f"{s.get('status', '?').upper()} {s.get('failed')}/{s.get('attempted')}: {s.get('error', '')[:160]}"


def table(results, modes):
    lines = []
    add = lines.append
    micro = [r for r in results if r.get("kind") == "micro"]
    batch = [r for r in results if r.get("kind") == "batch"]
    server = [r for r in results if r.get("kind") == "server"]
    if micro:
        add("Syscall micro-benchmarks: cost per call = (median wall(N) - median wall(0)) / calls")
        add(f"{'workload':18} {'mode':7} {'us/call':>9} {'ratio [min-max]':>22} {'wall(N)':>9} {'start-up':>9} {'peak RSS':>9}  status / note")
        for r in micro:
            if "modes" not in r:
                add(f"{r['name']:18} {'':7} FAILED: {r.get('error')}")
                continue
            for i, m in enumerate(modes):
                s = r["modes"].get(m)
                if not s:
                    continue
                us = f"{s['us_per_call']:.3f}" if s.get("us_per_call") is not None else "-"
                wall = f"{s['wall_median']:.3f}s" if s.get("wall_median") is not None else "-"
                st = f"{s['startup_s'] * 1e3:.1f}ms" if s.get("startup_s") is not None else "-"
                note = r["description"].split(": ", 1)[1] if i == 0 else ""
                stat = status_text(s)
                add(f"{r['name'] if i == 0 else '':18} {m:7} {us:>9} {fmt_ratio(s):>22} {wall:>9} {st:>9} "
                    f"{fmt_mb(s.get('peak_rss_kb')):>9}  {stat if stat != 'ok' else note}")
        add("")
    if batch:
        add("Batch workloads: wall time over the repetitions; ratio = median / native median, "
            "[min-max] = fastest and slowest run / native median")
        add(f"{'workload':18} {'mode':7} {'median':>9} {'min':>8} {'max':>8} {'ratio [min-max]':>22} "
            f"{'peak RSS':>9} {'tree RSS':>9}  status")
        for r in batch:
            if "modes" not in r:
                add(f"{r['name']:18} {'':7} FAILED: {r.get('error')}")
                continue
            for i, m in enumerate(modes):
                s = r["modes"].get(m)
                if not s:
                    continue
                f = lambda x: f"{x:.3f}s" if x is not None else "-"
                extra = f" (log {s['record_log_bytes']} B)" if s.get("record_log_bytes") else ""
                add(f"{r['name'] if i == 0 else '':18} {m:7} {f(s.get('median')):>9} {f(s.get('min')):>8} "
                    f"{f(s.get('max')):>8} {fmt_ratio(s):>22} {fmt_mb(s.get('peak_rss_kb')):>9} "
                    f"{fmt_mb(s.get('tree_rss_kb')):>9}  {status_text(s)}{extra}")
        add("")
    if server:
        add("Servers (wrk over 127.0.0.1, pgbench over a unix socket, from outside the group): slowdown = native req/s / mode req/s, "
            "latency ratio = mode avg / native avg")
        add(f"{'workload':18} {'mode':7} {'req/s':>9} {'slowdown [min-max]':>22} {'lat avg':>9} "
            f"{'lat p99':>9} {'lat ratio':>9} {'peak RSS':>9}  status")
        for r in server:
            if "skipped" in r:
                add(f"{r['name']:18} skipped: {r['skipped']}")
                continue
            if "paths" not in r:
                add(f"{r['name']:18} {'':7} FAILED: {r.get('error')}")
                continue
            for p, per_mode in r["paths"].items():
                for i, m in enumerate(modes):
                    s = per_mode.get(m)
                    if not s:
                        continue
                    rps = s["rps"].get("median")
                    lat = s["lat_avg_us"].get("median")
                    p99 = s.get("lat_p99_us")
                    lr = s["lat_avg_us"].get("ratio")
                    name = f"{r['name']} {p}" if i == 0 else ""
                    rss = r["server"][m].get("peak_rss_kb")
                    add(f"{name:18} {m:7} {'-' if rps is None else round(rps):>9} {fmt_ratio(s['rps']):>22} "
                        f"{'-' if lat is None else f'{lat / 1e3:.2f}ms':>9} "
                        f"{'-' if p99 is None else f'{p99 / 1e3:.2f}ms':>9} "
                        f"{'-' if lr is None else f'{lr:.2f}x':>9} {fmt_mb(rss):>9}  {status_text(s)}")
        add("")
        replay_table(server, add)
    return "\n".join(lines)


def replay_table(server, add):
    """One line per recorded server run: its replay's wall time against the recording's, and
    against the part of the recording in which the clients kept the server busy."""
    rows = [(r["name"], i, rp) for r in server for i, rp in
            enumerate(r.get("server", {}).get("record", {}).get("replays", []))]
    if not rows:
        return
    add("Replays of the recorded server runs (unshare -n detrun replay LOG): recorded = start "
        "to exit, of it: start-up, under load, stop; ratio = replay / recorded")
    add(f"{'workload':18} {'rep':>3} {'recorded':>9} {'start-up':>9} {'load':>8} {'stop':>8} "
        f"{'replay':>8} {'ratio':>7} {'vs load':>8}  status")
    f = lambda x: f"{x:.2f}s" if x is not None else "-"
    for name, i, rp in rows:
        load = rp.get("recorded_driven_s")
        vs = f"{rp['wall_s'] / load:.2f}x" if rp.get("wall_s") and load else "-"
        ratio = f"{rp['ratio']:.2f}x" if rp.get("ratio") else "-"
        add(f"{name:18} {i + 1:>3} {f(rp.get('recorded_wall_s')):>9} {f(rp.get('recorded_startup_s')):>9} "
            f"{f(load):>8} {f(rp.get('recorded_stop_s')):>8} {f(rp.get('wall_s')):>8} "
            f"{ratio:>7} {vs:>8}  "
            f"{'FAILED: ' + rp['error'][:160].replace(chr(10), ' | ') if 'error' in rp else 'ok'}")
    add("")


def run_interruptible(runner, name):
    """runner.run(); SIGTERM, SIGHUP or Ctrl-C stop what still runs (exit 130); runner.tmp
    goes in every case."""
    def on_term(sig, frame):
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    try:
        runner.run()
    except KeyboardInterrupt:
        log(f"{name}: interrupted; stopping what is still running")
        for r in list(LIVE):
            r.signal_tree(signal.SIGKILL)
            r.done.wait(10)
            r.reap_leftovers()
        raise SystemExit(130)
    finally:
        shutil.rmtree(runner.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, smaller inputs (smoke test)")
    ap.add_argument("--only", action="append", help="run only workloads whose name contains this")
    ap.add_argument("--modes", help="comma-separated modes to run besides native, e.g. detrun")
    ap.add_argument("--out-dir", default=HERE, help="where results.json and results.png go")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get install missing packages")
    args = ap.parse_args()
    t_start = time.monotonic()
    load_start = os.getloadavg()
    date_start = datetime.datetime.now().astimezone().isoformat(timespec="seconds")

    detrun = os.path.join(args.build, "detrun")
    if not os.access(detrun, os.X_OK):
        sys.exit(f"bench: {detrun} not found; build first (make build)")
    pkgs = ["time", "strace", "nginx", "wrk", "postgresql"]
    chart_python = python_with_matplotlib()
    if not chart_python:
        pkgs.append("python3-matplotlib")
    still_missing = set() if args.no_install else ensure_packages(pkgs)
    if not chart_python:
        chart_python = python_with_matplotlib()

    if not os.access(TIME, os.X_OK):
        sys.exit(f"bench: {TIME} is needed (Debian package time)")
    b = Bench(args)
    run_interruptible(b, "bench")
    modes = [m for m, _ in b.modes]

    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return None
    cpu = re.search(r"model name\s*:\s*(.*)", read_file("/proc/cpuinfo") or "")
    meta = {
        "date": date_start,
        "quick": args.quick,
        "repetitions": b.reps,
        "per_run_timeout_cap_s": b.cap,
        "wrk_seconds": b.wrk_seconds,
        "modes": modes,
        "skipped_modes": b.skipped_modes,
        "missing_packages": sorted(still_missing),
        "host": {"kernel": platform.release(), "cpus": os.cpu_count(),
                 "cpu": cpu.group(1) if cpu else None},
        "detrun_commit": sh(["git", "rev-parse", "--short", "HEAD"]),
        "detrun_tree_dirty": bool(sh(["git", "status", "--porcelain", "--untracked-files=no"])),
        "versions": {"nginx": (sh(["sh", "-c", "nginx -v 2>&1"]) or "").replace("nginx version: ", ""),
                     "strace": (sh(["strace", "-V"]) or "").split("\n")[0],
                     "gcc": (sh(["gcc", "-dumpfullversion"]) or "")},
        "order": "per workload: for each repetition, every mode in turn (A B A B)",
        "elapsed_s": None,
        # Other work on the machine skews every ratio: the load averages before the run, and
        # at its end (which includes the bench's own load: servers and wrk keep ~4 busy).
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
    }
    meta["elapsed_s"] = round(time.monotonic() - t_start, 1)
    os.makedirs(args.out_dir, exist_ok=True)
    json_path = os.path.join(args.out_dir, "results.json")
    with open(json_path, "w") as f:
        json.dump({"meta": meta, "workloads": b.results}, f, indent=1)

    print()
    print(f"detrun bench ({'QUICK' if args.quick else 'full'}), {meta['date']}, detrun {meta['detrun_commit']}"
          f"{' (dirty tree)' if meta['detrun_tree_dirty'] else ''}, {os.cpu_count()} CPUs, "
          f"reps batch/micro/server = {b.reps['batch']}/{b.reps['micro']}/{b.reps['server']}")
    print(f"load average (1 min) before the run: {load_start[0]:.2f}"
          + (" -- the machine was busy (other work?): ratios are noisy" if load_start[0] > 1.5 else ""))
    for m, why in b.skipped_modes.items():
        print(f"mode {m}: skipped ({why})")
    print()
    print(table(b.results, modes))
    png = os.path.join(args.out_dir, "results.png")
    if chart_python:
        r = subprocess.run([chart_python, os.path.join(HERE, "chart.py"), json_path, png],
                           capture_output=True, text=True)
        print(f"wrote {json_path} and {png}" if r.returncode == 0 else
              f"wrote {json_path}; chart failed: {r.stderr.strip()[-300:]}")
    else:
        print(f"wrote {json_path}; no chart (matplotlib unavailable)")
    print(f"bench took {time.monotonic() - t_start:.0f} s")


if __name__ == "__main__":
    main()
