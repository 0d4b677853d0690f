#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per-stage times of zero-work jobs from a guest log of submit-trace.sh.

A latency sample is a job submitted while no other job of the run was in
flight. Its stages, each from the first event of that kind after the
previous stage: submit (rkaccel_submit, the job pushed) -> the scheduler's
run_job work starts -> run_job (rkaccel_run) -> the simulator's exec work
starts -> the core's interrupt (raised by the chain's completion hrtimer,
or by the exec work itself when the modelled time has already passed) ->
the job done and its fence signalled (rkaccel_done, in the hard IRQ or its
thread) -> the waiting thread woken.
"""
import re
import statistics
import sys

LINE = re.compile(r'^SUBTRACE\s+(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
STAGES = [
    ("sched_work", "push -> scheduler's run_job work starts"),
    ("run_job", "work start -> run_job"),
    ("sim_exec", "run_job -> simulator's exec work starts"),
    ("irq", "exec work -> core interrupt (hard IRQ)"),
    ("done", "hard IRQ -> job done, fence signalled"),
    ("wakeup", "fence signalled -> waiting thread woken"),
]


def events(path):
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if m:
                comm, pid, ts, name, rest = m.groups()
                yield float(ts) * 1e6, comm, int(pid), name, rest


def jobs(evs):
    """Each job's events from its submit to the next submit."""
    cur, inflight = None, 0
    for ev in evs:
        t, comm, pid, name, rest = ev
        if name == "rkaccel_submit":
            if cur is not None:
                yield cur
            cur = {"submit": t, "alone": inflight == 0, "pid": pid, "evs": []}
            inflight += 1
        elif cur is not None:
            if name == "rkaccel_done":
                inflight = max(inflight - 1, 0)
            cur["evs"].append(ev)
    if cur is not None:
        yield cur


def stages(job):
    """Stage times (us) of one job, or None when an event is missing."""
    want = [
        ("sched_work", lambda n, r, p: n == "workqueue_execute_start" and "drm_sched_run_job_work" in r),
        ("run_job", lambda n, r, p: n == "rkaccel_run"),
        ("sim_exec", lambda n, r, p: n == "workqueue_execute_start" and "sim_exec" in r),
        ("irq", lambda n, r, p: n == "irq_handler_entry" and ("rknn-core" in r or ".npu" in r)),
        ("done", lambda n, r, p: n == "rkaccel_done"),
        ("wakeup", lambda n, r, p: n == "sched_wakeup" and ("pid=%d " % p) in r),
    ]
    out, last, i = {}, job["submit"], 0
    for t, comm, pid, name, rest in job["evs"]:
        if i < len(want) and want[i][1](name, rest, job["pid"]):
            out[want[i][0]] = t - last
            last = t
            i += 1
    if i < len(want):
        return None
    out["total"] = last - job["submit"]
    return out


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    samples = [s for j in jobs(events(sys.argv[1])) if j["alone"] for s in [stages(j)] if s]
    if not samples:
        print("submit-trace: no complete latency sample in the log")
        return 1
    print("%d zero-work jobs submitted alone; microseconds per stage:" % len(samples))
    print("  %-44s %9s %9s" % ("stage", "p50", "p99"))
    for key, what in STAGES + [("total", "push -> waiting thread woken")]:
        v = [s[key] for s in samples]
        print("  %-44s %9.1f %9.1f" % (what, statistics.median(v), pct(v, 99)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
