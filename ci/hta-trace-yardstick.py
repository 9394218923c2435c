#!/usr/bin/env python3
"""Holistic Trace Analysis (HTA) as the yardstick of `gtb diagnose`: HTA's figures for each trace, written
as JSON fixtures that CTest compares gtb against (CI never installs HTA), and HTA's load time beside
gtb's on one trace (the speed ratio).

Run by hand, in a virtual environment that has HTA (pip install HolisticTraceAnalysis); it installs
nothing itself.

usage: hta-trace-yardstick.py fixtures TRACE_DIR OUT_DIR
         for each TRACE_DIR/*.json.gz: OUT_DIR/<trace>.json with HTA's temporal breakdown, kernel-type
         split, idle-time breakdown per stream and comm/compute overlap over the whole trace (HTA
         loaded with include_last_profiler_step=True, so its window is gtb's whole-trace window), and
         the copy counts and bytes by event name from Python's own json reader (the exact reference)
       hta-trace-yardstick.py table GTB_BINARY TRACE_DIR FIXTURE_DIR
         the agreement table (Markdown): gtb's whole-trace figures beside HTA's fixtures, each
         difference as a share of a step (needs no HTA)
       hta-trace-yardstick.py replicate TRACE COPIES OUT
         a bigger trace for the speed test: TRACE's events COPIES times, each copy shifted in time past
         the previous one and its ProfilerStep numbers renumbered (OUT gzipped when it ends .gz)
       hta-trace-yardstick.py job TRACE RANKS MB OUT_DIR
         a job for the speed test: OUT_DIR/rank-N.json for N < RANKS, each TRACE's events replicated
         (as `replicate`) until the plain JSON has at least MB megabytes, its distributedInfo.rank N
       hta-trace-yardstick.py job-speed JOB_DIR GTB_BINARY
         seconds (wall and CPU) and peak memory of `gtb diagnose JOB_DIR --format json` (the whole
         job) against HTA loading the job's first rank alone (TraceAnalysis on a folder of that file)
       hta-trace-yardstick.py speed TRACE GTB_BINARY [--repeat N] [--baseline GTB_BEFORE] [--no-hta]
         seconds (wall and CPU) for HTA to load TRACE (TraceAnalysis), for `gtb diagnose TRACE
         --format json` (and the same of GTB_BEFORE, an earlier build, where given), and for inflating
         the file alone with each inflater on its own: zlib (`zcat TRACE > /dev/null`, or `cat` for a
         plain file) and ISA-L (`igzip -dc`, Debian's isal package, where it is installed: the inflater
         gtb itself uses), best of N (default 1; HTA, many times slower, runs once), with the peak
         resident memory of each (GNU time); the ratios HTA / gtb and gtb / each inflater alone (wall
         against wall, the user's wait, and CPU against CPU). --no-hta leaves HTA out (the earlier
         log's HTA figure then stands for it)
       hta-trace-yardstick.py speed-table SPEED.json...
         the Markdown table of `speed` outputs: per trace, gtb (and the earlier build) wall and CPU
         seconds, inflating alone, HTA's load, the ratios, peak memory
"""
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time


def load_hta(trace_path, include_last=True):
    from hta.trace_analysis import TraceAnalysis  # imported late: `speed` for gtb alone needs no HTA

    d = tempfile.mkdtemp(prefix="hta-yardstick-")
    shutil.copy(trace_path, os.path.join(d, os.path.basename(trace_path)))
    try:
        return TraceAnalysis(trace_dir=d, include_last_profiler_step=include_last)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def reference_copies(trace_path):
    """Copy counts and bytes by event name, straight from the JSON: the exact reference."""
    opener = gzip.open if trace_path.endswith(".gz") else open
    with opener(trace_path, "rt") as f:
        doc = json.load(f)
    out = {}
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") == "gpu_memcpy":
            r = out.setdefault(e["name"], {"count": 0, "bytes": 0})
            r["count"] += 1
            r["bytes"] += int(e.get("args", {}).get("bytes", 0))
    return out


def hta_figures(trace_path):
    import hta

    fig = {"hta_version": getattr(hta, "__version__", "unknown"), "trace": os.path.basename(trace_path),
           "copies_reference": reference_copies(trace_path)}
    try:
        a = load_hta(trace_path)
    except Exception as e:  # HTA refuses some traces (CPU-only): the fixture says so, gtb must not fail
        fig["loaded"] = False
        fig["error"] = f"{type(e).__name__}: {e}"[:400]
        return fig
    fig["loaded"] = True
    rank = sorted(a.t.traces.keys())[0]
    df = a.t.get_trace(rank)
    gpu = df[df["stream"].ne(-1)]
    if len(gpu) == 0:
        fig["error"] = "no GPU events with a stream"
        return fig
    fig["window"] = {"begin_us": float(gpu["ts"].min()), "end_us": float((gpu["ts"] + gpu["dur"]).max()),
                     "events": int(len(gpu))}
    steps = sorted(set(int(i) if i == i else -1 for i in gpu["iteration"].unique()))  # NaN: none
    fig["iterations"] = steps
    for name, call in [
        ("temporal", lambda: a.get_temporal_breakdown(visualize=False)),
        ("kernel_types", lambda: a.get_gpu_kernel_breakdown(visualize=False)[0]),
        ("idle", lambda: a.get_idle_time_breakdown(visualize=False)[0]),
        ("comm_comp_overlap", lambda: a.get_comm_comp_overlap(visualize=False)),
    ]:
        try:
            out = call()
            fig[name] = json.loads(out.to_json(orient="records"))
        except Exception as e:
            fig[name + "_error"] = f"{type(e).__name__}: {e}"[:400]
    return fig


def cmd_fixtures(trace_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for f in sorted(os.listdir(trace_dir)):
        if not f.endswith(".json.gz"):
            continue
        fig = hta_figures(os.path.join(trace_dir, f))
        out = os.path.join(out_dir, f[: -len(".json.gz")] + ".json")
        tmp = out + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(fig, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, out)
        print(f"{out}: loaded={fig.get('loaded')} {fig.get('error', '')}")
    return 0


def child_run(argv):
    """Seconds (wall, CPU) and peak RSS (KiB) of one child process. The peak memory comes from GNU time
    (`/usr/bin/time -f %M`) where there is one: a child forked from Python inherits Python's resident
    memory as the floor of its own ru_maxrss (about 15 MB), which would hide a small reader's peak."""
    gnu_time = shutil.which("time", path="/usr/bin")
    rss_file = None
    if gnu_time:
        fd, rss_file = tempfile.mkstemp(prefix="yardstick-rss-")
        os.close(fd)
        argv = [gnu_time, "-f", "%M", "-o", rss_file] + argv
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    # wait4: the resource use of this child (and GNU time's child) alone (RUSAGE_CHILDREN would be the
    # maximum of all so far).
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss
    if rss_file:
        with open(rss_file) as fh:
            lines = [l for l in fh.read().split() if l.isdigit()]
        os.unlink(rss_file)
        rss = int(lines[-1]) if lines else rss
    if p.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {p.returncode}")
    return dt, usage.ru_utime + usage.ru_stime, rss


def machine_context(gtb):
    """The machine and the programs that measured: a speed figure names where it came from."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((l.split(":", 1)[1].strip() for l in fh if l.startswith("model name")), "")
    except OSError:
        pass
    try:
        version = subprocess.run([gtb, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        version = ""
    try:
        import importlib.metadata as md
        hta = md.version("HolisticTraceAnalysis")
    except Exception:  # HTA absent: the speed run needs it, so say so rather than guess
        hta = "not installed"
    return {"cpu_model": cpu, "logical_cpus": os.cpu_count(), "os": platform.platform(),
            "loadavg_before": os.getloadavg()[0], "gtb": version, "hta": hta}


def cmd_speed(trace, gtb, repeat, baseline=None, hta=True):
    here = os.path.abspath(__file__)
    inflate = ["zcat", trace] if trace.endswith(".gz") else ["cat", trace]
    runs = [("gtb", [gtb, "diagnose", trace, "--format", "json"], repeat),
            ("inflate_alone", inflate, repeat)]
    if trace.endswith(".gz") and shutil.which("igzip"):
        runs.append(("inflate_alone_igzip", ["igzip", "-dc", trace], repeat))
    if baseline:
        runs.append(("gtb_before", [baseline, "diagnose", trace, "--format", "json"], repeat))
    if hta:
        runs.append(("hta", [sys.executable, here, "hta-load", trace], 1))
    best = {}
    load_before = os.getloadavg()[0]
    for tool, argv, n in runs:
        for _ in range(n):
            dt, cpu, rss = child_run(argv)
            b = best.setdefault(tool, {"seconds": dt, "cpu_seconds": cpu, "peak_rss_kib": rss, "runs": 0})
            b["seconds"] = min(b["seconds"], dt)
            b["cpu_seconds"] = min(b["cpu_seconds"], cpu)
            b["peak_rss_kib"] = max(b["peak_rss_kib"], rss)
            b["runs"] += 1
    size = os.path.getsize(trace)
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rb") as f:
        json_bytes = sum(len(c) for c in iter(lambda: f.read(1 << 22), b""))
    ctx = machine_context(gtb)
    ctx["loadavg_before"] = load_before
    ctx["loadavg_after"] = os.getloadavg()[0]
    result = {"trace": os.path.basename(trace), "file_bytes": size, "json_bytes": json_bytes, "repeat": repeat,
              "context": ctx, **best}
    g, z = best["gtb"], best["inflate_alone"]
    # gtb inflates on one thread and parses on another: its wall time is what the user waits; zcat's CPU
    # time is the cost of inflating alone (its wall time also counts waiting for a core on a busy machine).
    result["gtb_wall_over_inflate_cpu"] = g["seconds"] / z["cpu_seconds"]
    result["gtb_cpu_over_inflate_cpu"] = g["cpu_seconds"] / z["cpu_seconds"]
    result["gtb_wall_over_inflate_wall"] = g["seconds"] / z["seconds"]
    if "inflate_alone_igzip" in best:
        i = best["inflate_alone_igzip"]
        result["gtb_wall_over_igzip_wall"] = g["seconds"] / i["seconds"]
        result["gtb_cpu_over_igzip_cpu"] = g["cpu_seconds"] / i["cpu_seconds"]
    if "hta" in best:
        result["hta_over_gtb"] = best["hta"]["seconds"] / g["seconds"]
        # CPU time is the fairer ratio on a shared machine: wall time also counts waiting for a core.
        result["hta_over_gtb_cpu"] = best["hta"]["cpu_seconds"] / g["cpu_seconds"]
    if "gtb_before" in best:
        result["before_over_gtb"] = best["gtb_before"]["seconds"] / g["seconds"]
        result["before_over_gtb_cpu"] = best["gtb_before"]["cpu_seconds"] / g["cpu_seconds"]
    print(json.dumps(result, indent=1))
    return 0


def cmd_speed_table(files):
    print("| trace | JSON MB | gtb wall s | gtb CPU s | earlier gtb wall s | earlier gtb CPU s "
          "| zcat wall s | zcat CPU s | igzip wall s | igzip CPU s | HTA load CPU s | HTA / gtb, CPU "
          "| gtb / zcat, wall | gtb / zcat, CPU | gtb / igzip, wall | gtb / igzip, CPU "
          "| gtb peak RSS MiB | HTA peak RSS MiB | load avg |")
    print("| --- |" + " ---: |" * 18)
    for f in files:
        with open(f) as fh:
            d = json.load(fh)
        g, z = d["gtb"], d["inflate_alone"]
        b, i, h = d.get("gtb_before"), d.get("inflate_alone_igzip"), d.get("hta")

        def val(x, key, fmt):
            return format(x[key], fmt) if x else "-"

        def ratio(num, den):
            return f"{num / den:.2f}x" if den else "-"

        ctx = d["context"]
        cells = [d["trace"], f"{d['json_bytes'] / 1e6:.1f}", f"{g['seconds']:.3f}", f"{g['cpu_seconds']:.3f}",
                 val(b, "seconds", ".3f"), val(b, "cpu_seconds", ".3f"),
                 f"{z['seconds']:.3f}", f"{z['cpu_seconds']:.3f}", val(i, "seconds", ".3f"), val(i, "cpu_seconds", ".3f"),
                 val(h, "cpu_seconds", ".2f"), f"{h['cpu_seconds'] / g['cpu_seconds']:.1f}x" if h else "-",
                 ratio(g["seconds"], z["seconds"]), ratio(g["cpu_seconds"], z["cpu_seconds"]),
                 ratio(g["seconds"], i["seconds"]) if i else "-", ratio(g["cpu_seconds"], i["cpu_seconds"]) if i else "-",
                 f"{g['peak_rss_kib'] / 1024:.1f}", f"{h['peak_rss_kib'] / 1024:.1f}" if h else "-",
                 f"{ctx['loadavg_before']:.1f}-{ctx.get('loadavg_after', float('nan')):.1f}"]
        print("| " + " | ".join(cells) + " |")
    return 0


def cmd_replicate(trace, copies, out):
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rt") as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float))) - min(ts)
    shift = int(span) + 1000
    nsteps = sum(1 for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
    wopen = gzip.open if out.endswith(".gz") else open
    with wopen(out, "wt") as w:
        head = json.dumps(doc)[:-1]
        w.write(head + (", " if doc else "") + '"traceEvents": [\n')
        first = True
        for c in range(copies):
            for e in events:
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = e2["ts"] + c * shift
                name = str(e2.get("name", ""))
                if name.startswith("ProfilerStep#"):
                    e2["name"] = "ProfilerStep#" + str(int(name.split("#")[1]) + c * nsteps)
                for k in ("id",):
                    if isinstance(e2.get(k), int):
                        e2[k] = e2[k] + c * 10**9
                if isinstance(e2.get("args"), dict):
                    a = dict(e2["args"])
                    for k in ("correlation", "External id"):
                        if isinstance(a.get(k), int):
                            a[k] = a[k] + c * 10**9
                    e2["args"] = a
                w.write(("" if first else ",\n") + json.dumps(e2))
                first = False
        w.write("\n]}\n")
    print(f"{out}: {copies} copies of {len(events)} events")
    return 0


def cmd_table(gtb, trace_dir, fixture_dir):
    rows = []
    print("| trace | figure | gtb (us) | HTA (us) | difference, % of a step | note |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for f in sorted(os.listdir(fixture_dir)):
        if not f.endswith(".json"):
            continue
        name = f[:-5]
        with open(os.path.join(fixture_dir, f)) as fh:
            h = json.load(fh)
        g = json.loads(subprocess.run([gtb, "diagnose", os.path.join(trace_dir, name + ".json.gz"), "--format", "json"],
                                      check=True, capture_output=True, text=True).stdout)
        if "temporal" not in h:
            print(f"| {name} | - | diagnosed | {h.get('error', 'HTA has no figures')} | - | HTA cannot; gtb says what it cannot say |")
            continue
        o = g["overall"]["gpu"]
        t = h["temporal"][0]
        step = t["kernel_time(us)"] / max(1, len(g["steps"]))
        mk = o["sync_markers"].get("us_outside_busy_in_window", o["sync_markers"]["us_outside_busy"])

        def union(kind):
            return sum(r["sum"] for r in h["kernel_types"] if kind in r["kernel_type"])

        figs = [("window", o["window_us"], t["kernel_time(us)"], ""),
                ("idle", o["idle_us"], t["idle_time(us)"], f"HTA counts {mk:g} us of cuda_sync markers as busy" if mk else ""),
                ("compute", o["split"]["compute_us"], t["compute_time(us)"], ""),
                ("non-compute", o["busy_us"] - o["split"]["compute_us"], t["non_compute_time(us)"],
                 "the same markers" if mk else ""),
                ("communication", o["split"]["communication_us"], union("COMMUNICATION"), ""),
                ("memory", o["split"]["memory_us"], union("MEMORY"), "")]
        for s in o["streams"]:
            hi = sum(r["idle_time"] for r in h.get("idle", []) if r["stream"] == s["stream"])
            if h.get("idle"):
                figs.append((f"stream {s['stream']} idle", s["idle_us"], hi, ""))
        if "idle_error" in h:
            figs.append(("per-stream idle", float("nan"), float("nan"), "HTA's idle breakdown fails: " + h["idle_error"][:60]))
        for label, a, b, note in figs:
            diff = 100 * (a - b) / step if a == a and b == b else float("nan")
            print(f"| {name} | {label} | {a:.0f} | {b:.0f} | {diff:+.2f} | {note} |")
    return 0


def cmd_job(trace, ranks, mb, out_dir):
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rt") as f:
        size = len(f.read())
    copies = max(1, -(-int(mb * 1e6) // size))
    os.makedirs(out_dir, exist_ok=True)
    one = os.path.join(out_dir, "replicated.tmp.json")
    cmd_replicate(trace, copies, one)
    with open(one) as f:
        doc = json.load(f)
    os.remove(one)
    for r in range(ranks):
        info = dict(doc.get("distributedInfo") or {})
        info.update({"rank": r, "world_size": ranks})
        doc["distributedInfo"] = info
        path = os.path.join(out_dir, f"rank-{r}.json")
        with open(path, "w") as w:
            json.dump(doc, w)
        print(f"{path}: {os.path.getsize(path)} bytes")
    return 0


def cmd_job_speed(job_dir, gtb):
    here = os.path.abspath(__file__)
    files = sorted(f for f in os.listdir(job_dir) if f.endswith(".json"))
    result = {"job": os.path.basename(os.path.normpath(job_dir)), "ranks": len(files),
              "rank_file_bytes": [os.path.getsize(os.path.join(job_dir, f)) for f in files],
              "context": machine_context(gtb)}
    dt, cpu, rss = child_run([gtb, "diagnose", job_dir, "--format", "json"])
    result["gtb_job"] = {"seconds": dt, "cpu_seconds": cpu, "peak_rss_kib": rss}
    dt, cpu, rss = child_run([gtb, "diagnose", os.path.join(job_dir, files[0]), "--format", "json"])
    result["gtb_one_rank"] = {"seconds": dt, "cpu_seconds": cpu, "peak_rss_kib": rss}
    dt, cpu, rss = child_run([sys.executable, here, "hta-load", os.path.join(job_dir, files[0])])
    result["hta_load_one_rank"] = {"seconds": dt, "cpu_seconds": cpu, "peak_rss_kib": rss}
    result["hta_one_rank_over_gtb_job"] = result["hta_load_one_rank"]["seconds"] / result["gtb_job"]["seconds"]
    print(json.dumps(result, indent=1))
    return 0


def main(argv):
    if len(argv) == 6 and argv[1] == "job":
        return cmd_job(argv[2], int(argv[3]), float(argv[4]), argv[5])
    if len(argv) == 4 and argv[1] == "job-speed":
        return cmd_job_speed(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "table":
        return cmd_table(argv[2], argv[3], argv[4])
    if len(argv) == 5 and argv[1] == "replicate":
        return cmd_replicate(argv[2], int(argv[3]), argv[4])
    if len(argv) >= 4 and argv[1] == "fixtures":
        return cmd_fixtures(argv[2], argv[3])
    if len(argv) >= 4 and argv[1] == "speed":
        opts = argv[4:]
        repeat = int(opts[opts.index("--repeat") + 1]) if "--repeat" in opts else 1
        baseline = opts[opts.index("--baseline") + 1] if "--baseline" in opts else None
        return cmd_speed(argv[2], argv[3], repeat, baseline, "--no-hta" not in opts)
    if len(argv) >= 3 and argv[1] == "speed-table":
        return cmd_speed_table(argv[2:])
    if len(argv) == 3 and argv[1] == "hta-load":  # the timed child
        load_hta(argv[2], include_last=False)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
