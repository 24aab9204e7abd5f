#!/usr/bin/env python3
"""`make bench` part 2: memcached (4 threads) natively, under plain detrun, and replicated
3 ways by `detrun replicate` on a 3-node NATS JetStream cluster on loopback — the same
client each time: 4 connections (--conns), each setting its own keys one request at a time.
Reports throughput and per-request latency (p50, p99). The replicated leader holds every
reply until the stream has acknowledged the request (output commit) while it goes on with
the others, whose records share the stream's messages (group commit): each client pays a
stream round trip per request, the group does not.

Then failover: the leader is killed with SIGKILL while a client writes; reported is the
time from the kill until the new leader answers that client, next to the lease TTL and the
time the followers took to drain the stream (consume what the old leader appended last),
whose sum bounds the takeover."""
import argparse, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "replicate", "cluster.sh")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, limit=60):
    end = time.time() + limit
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def client(port, conns, per):
    lat, errors = [], []
    lock = threading.Lock()

    def run(c):
        mine = []
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            f = s.makefile("rb")
            for i in range(per):
                v = b"v%d" % i
                t0 = time.perf_counter()
                s.sendall(b"set c%d_%d 0 0 %d\r\n%s\r\n" % (c, i, len(v), v))
                if f.readline() != b"STORED\r\n":
                    raise RuntimeError("bad answer")
                mine.append(time.perf_counter() - t0)
            s.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(str(e))
        with lock:
            lat.extend(mine)

    t0 = time.perf_counter()
    ts = [threading.Thread(target=run, args=(c,)) for c in range(conns)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    wall = time.perf_counter() - t0
    lat.sort()
    if errors or not lat:
        return None
    return {"rps": len(lat) / wall, "p50": lat[len(lat) // 2] * 1e6,
            "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6}


def memcached(port):
    return ["/usr/bin/memcached", "-u", "root", "-t", "4", "-l", "127.0.0.1", "-p", str(port), "-U", "0"]


def measure(name, argvs, port, conns, per, cwd):
    procs = []
    for i, argv in enumerate(argvs):
        d = os.path.join(cwd, "%s%d" % (name, i))
        os.makedirs(d, exist_ok=True)
        procs.append(subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL,
                                      stderr=open(os.path.join(d, "err"), "w"),
                                      start_new_session=True))
        if i == 0 and not wait_port(port):
            break
    r = client(port, conns, per) if wait_port(port) else None
    for p in reversed(procs):
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return r


def wait_file(path, text, limit=90):
    end = time.time() + limit
    while time.time() < end:
        try:
            with open(path) as f:
                if text in f.read():
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


class Writer(threading.Thread):
    """Sets keys on one connection, reconnecting (every 5 ms) when it fails; notes the time
    of every acknowledgement."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.acks, self.stop = port, [], False

    def run(self):
        i, s = 0, None
        while not self.stop:
            try:
                if s is None:
                    s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
                    f = s.makefile("rb")
                v = b"v%d" % i
                s.sendall(b"set f%d 0 0 %d\r\n%s\r\n" % (i, len(v), v))
                if f.readline() != b"STORED\r\n":
                    raise OSError("bad answer")
                self.acks.append(time.perf_counter())
                i += 1
            except OSError:
                if s is not None:
                    s.close()
                s = None
                time.sleep(0.005)


def progress(detrun, urls, group):
    """--status: the stream's last sequence and each replica's stream sequence."""
    r = subprocess.run([detrun, "replicate", "--status", "--cluster", urls, "--group", group],
                       capture_output=True, text=True, timeout=30)
    last, at = None, {}
    for line in r.stdout.splitlines():
        w = line.replace(",", "").split()
        if line.startswith("group "):
            last = int(w[w.index("sequence") + 1])
        elif line.startswith("replica "):
            at[w[1].rstrip(":")] = int(w[w.index("sequence") + 1])
    return last, at


def start_group(detrun, urls, group, port, tmp, lease_ms):
    procs = {}
    for n in ("a", "b", "c"):
        d = os.path.join(tmp, "failover-" + n)
        os.makedirs(d, exist_ok=True)
        argv = [detrun, "replicate", "--cluster", urls, "--group", group, "--node", n,
                "--lease-ms", str(lease_ms), "--"] + memcached(port)
        procs[n] = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL,
                                    stderr=open(os.path.join(d, "err"), "w"),
                                    start_new_session=True)
        if not wait_file(os.path.join(d, "err"), "leads group" if n == "a" else "follows group"):
            return procs, False
    return procs, True


def failover(detrun, urls, tmp, lease_ms):
    """Kills the leader under load. Drained: when the follower that took over had consumed
    every record the old leader appended (--status, whose progress is published every
    0.5 s: an upper bound)."""
    port, group = free_port(), "failover%d" % os.getpid()
    procs, ok = start_group(detrun, urls, group, port, tmp, lease_ms)
    try:
        w = Writer(port)
        w.start()
        while ok and len(w.acks) < 300 and w.is_alive():
            time.sleep(0.01)
        killed = time.perf_counter()
        os.kill(procs["a"].pid, signal.SIGKILL)
        end, reached = None, {}
        while ok and time.perf_counter() - killed < 120:
            last, at = progress(detrun, urls, group)
            end = end or last
            for n in ("b", "c"):
                if end and at.get(n, 0) >= end and n not in reached:
                    reached[n] = time.perf_counter() - killed
            if any(t > killed for t in w.acks) and len(reached) == 2:
                break
            time.sleep(0.05)
        w.stop = True
        served = [t for t in w.acks if t > killed]
        errs = "".join(open(os.path.join(tmp, "failover-" + n, "err")).read() for n in "bc")
        line = next((l for l in errs.splitlines()
                     if "leads from t=" in l and "here at the same" not in l), "")
        leader = line.split("node ")[1][0] if line else None
        if not served or leader not in reached:
            return None
        return {"served": served[0] - killed, "drained": reached[leader],
                "lease": lease_ms / 1000, "how": line.replace("detrun: replicate: ", "")}
    finally:
        for p in procs.values():
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--conns", type=int, default=4,
                    help="client connections, each one request at a time (default 4)")
    ap.add_argument("--lease-ms", type=int, default=4000,
                    help="the failover group's lease TTL (the tests' 4000; detrun's default 15000)")
    a = ap.parse_args()
    detrun = os.path.abspath(os.path.join(a.build, "detrun"))
    conns, per = a.conns, (100 if a.quick else 500)
    tmp = tempfile.mkdtemp(prefix="detrun-bench-repl-")
    base = free_port() % 20000 + 30000
    try:
        r = subprocess.run(["sh", CLUSTER, "start", os.path.join(tmp, "nats"), str(base)],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print("replicate bench: cannot start the NATS cluster: %s" % r.stderr.strip())
            return 1
        urls = r.stdout.strip()
        rows = []
        for name in ("native", "detrun", "replicated"):
            port = free_port()
            if name == "native":
                argvs = [memcached(port)]
            elif name == "detrun":
                argvs = [[detrun, "--"] + memcached(port)]
            else:
                g = "bench%d" % os.getpid()
                argvs = [[detrun, "replicate", "--cluster", urls, "--group", g, "--node", n, "--"]
                         + memcached(port) for n in ("a", "b", "c")]
            r = measure(name, argvs, port, conns, per, tmp)
            rows.append((name, r))
        f = failover(detrun, urls, tmp, a.lease_ms)
        print("memcached -t 4, %d connections x %d sets each (same client):" % (conns, per))
        print("  %-11s %10s %10s %10s" % ("", "req/s", "p50 us", "p99 us"))
        for name, r in rows:
            if r:
                print("  %-11s %10.0f %10.0f %10.0f" % (name, r["rps"], r["p50"], r["p99"]))
            else:
                print("  %-11s failed" % name)
        if f:
            print("failover (leader killed with SIGKILL under a writing client): %.2f s until the"
                  " new leader answered;\n  lease TTL %.1f s + drain %.1f s (until the new leader"
                  " had every record, per --status:\n  progress 0.5 s old at most) = %.1f s;"
                  " %s" % (f["served"], f["lease"], f["drained"], f["lease"] + f["drained"],
                           f["how"]))
        else:
            print("failover: failed")
        return 0 if all(r for _, r in rows) and f else 1
    finally:
        subprocess.run(["sh", CLUSTER, "stop", os.path.join(tmp, "nats")], timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
