"""bench/citus_sampler.py DIR NAME T0: the sampler of one statement of
bench/citus.sh, reading the statement's psql stderr on stdin until it ends.

DIR holds the three clusters (coord, w1, w2: their postmaster.pid) and, once
the session has started, the file bpid (the coordinator backend's pid).
T0 is the statement's start (seconds since the epoch).  Writes, in DIR:

  NAME.phases  each stderr line as it arrives (a job's progress NOTICEs):
               "seconds coord w1 w2 line", seconds since T0 and the CPU
               clock ticks of each cluster at that moment (see ticks)
  NAME.procs   every 250 ms: "seconds ours machine", the processes of the
               three clusters in state R (running or waiting for a core) and
               the machine's procs_running (/proc/stat)
  NAME.mem     "base peak backend_peak" (kB of RssAnon: private memory, not
               shared buffers): the coordinator's processes summed, when
               the backend started and at their peak (sampled every 50 ms;
               the list of processes renewed every 250 ms), and the
               backend's own peak

Reading /proc here rather than from the shell keeps the sampling cheap and
the NOTICE times exact on a loaded machine.
"""
import os
import select
import sys
import time

DIR, NAME, T0 = sys.argv[1], sys.argv[2], float(sys.argv[3])
CLUSTERS = ("coord", "w1", "w2")


def postmaster(cluster):
    with open(os.path.join(DIR, cluster, "postmaster.pid")) as f:
        return int(f.readline())


PMS = {c: postmaster(c) for c in CLUSTERS}


def stat(pid):
    """the fields of /proc/pid/stat after the command name, or None"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def children():
    """{postmaster pid: [child pid, ...]}"""
    kids = {pm: [] for pm in PMS.values()}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            s = stat(int(entry))
            if s is not None and int(s[1]) in kids:
                kids[int(s[1])].append(int(entry))
    return kids


def ticks(pm, kids):
    """utime + stime of the postmaster, its live children and the children
    it has reaped (cutime + cstime)"""
    s = stat(pm)
    n = int(s[11]) + int(s[12]) + int(s[13]) + int(s[14]) if s else 0
    for pid in kids:
        c = stat(pid)
        if c is not None:
            n += int(c[11]) + int(c[12])
    return n


def rss_anon(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def procs_running():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("procs_running"):
                return int(line.split()[1])
    return 0


phases = open(os.path.join(DIR, NAME + ".phases"), "w")
procs = open(os.path.join(DIR, NAME + ".procs"), "w")
bpid = None
base = peak = bpeak = 0
last_procs = 0.0
buf = b""
fd = sys.stdin.fileno()
while True:
    ready, _, _ = select.select([fd], [], [], 0.05)
    now = time.time()
    if ready:
        data = os.read(fd, 65536)
        if not data:
            break
        buf += data
        kids = None
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            kids = kids or children()
            phases.write("%.3f %s %s\n" % (
                now - T0, " ".join(str(ticks(PMS[c], kids[PMS[c]])) for c in CLUSTERS),
                line.decode("utf-8", "replace")))
            phases.flush()
    if bpid is None:
        try:
            with open(os.path.join(DIR, "bpid")) as f:
                bpid = int(f.read())
        except (OSError, ValueError):
            continue
        kids = children()
        base = sum(rss_anon(p) for p in kids[PMS["coord"]])
    if now - last_procs >= 0.25:
        last_procs = now
        kids = children()
        ours = sum(1 for pm in PMS.values() for p in kids[pm]
                   if (stat(p) or ["?"])[0] == "R")
        procs.write("%.3f %d %d\n" % (now - T0, ours, procs_running()))
    peak = max(peak, sum(rss_anon(p) for p in kids[PMS["coord"]]))
    bpeak = max(bpeak, rss_anon(bpid))
with open(os.path.join(DIR, NAME + ".mem"), "w") as f:
    f.write("%d %d %d\n" % (base, peak, bpeak))
