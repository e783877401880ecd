#!/usr/bin/env python3
"""The broker against the bare SwiftNIO baseline, driven by a client that is not the project's own: Python's
`websockets` (on uvloop when it is installed), in several worker processes.

For each of --rounds rounds, each scenario runs against a fresh broker, then against a fresh baseline:
  fanout   1 publisher and S subscribers on one channel, R positions/s for D seconds;
  pairs    P publisher/subscriber pairs, each on its own channel, R positions/s in all for D seconds;
  connect  a storm of N connections, C in flight per worker, each open once its first frame (the broker's
           welcome) is read or, on the baseline, once upgraded; then all are closed.
The load scenarios publish for --warmup seconds first and wait for those deliveries; the measured window then
runs from the end of the warm-up to the last delivery of the D seconds (or --drain seconds after publishing
stops). The server's CPU is read from /proc/PID/stat (user + system, all threads) at both ends of the window.
Deliveries are frames received that hold `"type":"position"`; lost = expected - received, where expected is the
publishes the server did not refuse times the watchers of each.

Usage (scripts/neutral-bench makes the virtual environment and passes the paths):
  neutral_bench.py --broker PATH --baseline PATH [--sizes large|small] [--rounds N] [--out DIR]
                   [--scenarios fanout,pairs,connect] [--procs 4] [--seconds D] [--subscribers S] ...
Writes DIR/report.json (every run's raw numbers) and DIR/report.md (per scenario: each round's broker, baseline
and ratio, and the median of the ratios), after every run. Exits 1 when a run failed, lost a delivery or failed
a connection.
"""
import argparse
import datetime
import hashlib
import importlib.metadata
import importlib.util
import json
import multiprocessing
import os
import platform
import resource
import shutil
import signal
import sys
import tempfile
import time

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
import neutral_report  # noqa: E402
import neutral_worker  # noqa: E402
from neutral_servers import BaselineServer, BrokerServer  # noqa: E402

SIZES = {
    # The large sizes of docs/BENCHMARKS.md's fan-out and pairs, and the 15,000-connection storm.
    "large": {"subscribers": 1000, "fanout_rate": 50.0, "pairs": 1000, "pairs_rate": 20000.0, "connections": 15000, "seconds": 20.0},
    "small": {"subscribers": 100, "fanout_rate": 50.0, "pairs": 100, "pairs_rate": 1000.0, "connections": 1000, "seconds": 5.0},
}
SCENARIOS = ("fanout", "pairs", "connect")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--broker", required=True, help="a built location-broker")
    parser.add_argument("--baseline", required=True, help="a built baseline-server (Benchmarks/BaselineServer)")
    parser.add_argument("--sizes", choices=sorted(SIZES), default="large")
    parser.add_argument("--rounds", type=int, default=1, help="broker then baseline, this many times (default 1)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated, from fanout, pairs, connect")
    parser.add_argument("--out", default="/tmp/neutral-bench", help="where report.json and report.md go")
    parser.add_argument("--procs", type=int, default=4, help="worker processes (default 4)")
    parser.add_argument("--concurrency", type=int, default=64, help="connections being opened at once per worker (default 64)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of publishing before the measured window")
    parser.add_argument("--drain", type=float, default=15.0, help="seconds to wait for the last deliveries once publishing stops")
    for name in ("subscribers", "pairs", "connections"):
        parser.add_argument(f"--{name}", type=int, help=f"overrides the sizes' {name}")
    for name in ("fanout-rate", "pairs-rate", "seconds"):
        parser.add_argument(f"--{name}", type=float, help=f"overrides the sizes' {name.replace('-', ' ')}")
    args = parser.parse_args()
    size = dict(SIZES[args.sizes])
    for name in size:
        if getattr(args, name) is not None:
            size[name] = getattr(args, name)
    args.size = size
    args.scenarios = [s for s in args.scenarios.split(",") if s]
    problems = [f"unknown scenario {s}" for s in args.scenarios if s not in SCENARIOS]
    if sys.version_info < (3, 11):
        problems.append("Python 3.11 or later is needed (asyncio.timeout)")
    if not 1 <= args.procs <= 200:
        problems.append("--procs must be 1 to 200 (each worker has its own 127.0.0.x address)")
    if not 1 <= args.rounds <= 50:
        problems.append("--rounds must be 1 to 50")
    if not 1 <= args.concurrency <= 1000:
        problems.append("--concurrency must be 1 to 1000")
    if not 0 < size["seconds"] <= 600 or not 0 <= args.warmup <= 60:
        problems.append("--seconds must be above 0 and at most 600, --warmup 0 to 60")
    if max(size["subscribers"], size["pairs"] * 2, size["connections"]) > 200_000 or min(size["subscribers"], size["pairs"], size["connections"]) < 1:
        problems.append("the sizes must be 1 to 200,000 connections")
    if not 0 < size["fanout_rate"] <= 10_000 or not 0 < size["pairs_rate"] <= 200_000:
        problems.append("--fanout-rate must be above 0 and at most 10,000, --pairs-rate at most 200,000")
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    per_worker = -(-max(size["subscribers"] + 1, size["pairs"] * 2, size["connections"]) // args.procs)
    if per_worker + 100 > files:
        problems.append(f"{per_worker:,} connections per worker do not fit in {files:,} open files: raise --procs")
    for path in (args.broker, args.baseline):
        if not os.access(path, os.X_OK):
            problems.append(f"{path} is not an executable")
    if problems:
        parser.error("; ".join(problems))
    return args


class Workers:
    """The worker processes of one run, each with its pipe; stopped (SIGTERM, then SIGKILL) by `stop`."""

    def __init__(self, plans):
        context = multiprocessing.get_context("spawn")
        self.pipes, self.processes = [], []
        try:
            for plan in plans:
                parent, child = context.Pipe()
                process = context.Process(target=neutral_worker.run, args=(child, plan), daemon=True)
                process.start()
                child.close()
                self.pipes.append(parent)
                self.processes.append(process)
        except BaseException:
            self.stop()
            raise

    def answers(self, timeout):
        """Each worker's next answer, in worker order; fails when one does not answer within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        result = []
        for i, pipe in enumerate(self.pipes):
            if not pipe.poll(max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"worker {i} did not answer within {timeout:g} s")
            try:
                answer = pipe.recv()
            except EOFError:
                raise RuntimeError(f"worker {i} exited ({self.processes[i].exitcode})") from None
            if "error" in answer:
                raise RuntimeError(f"worker {i}: {answer['error']}")
            result.append(answer)
        return result

    def ask(self, requests, timeout):
        """Sends each worker its request (one dict for all, or a list), then waits for every answer."""
        for i, pipe in enumerate(self.pipes):
            pipe.send(requests[i] if isinstance(requests, list) else requests)
        return self.answers(timeout)

    def stop(self):
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()
        for pipe in self.pipes:
            pipe.close()


def slices(count, parts):
    """`count` items cut into `parts` contiguous ranges, as (first, end) pairs."""
    return [(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def plans(server, scenario, args):
    """One plan per worker: its share of the connections and of the rate, and its own source address."""
    base = {"kind": server.kind, "port": server.port, "scenario": scenario, "concurrency": args.concurrency,
            "open_timeout": 60.0, "token_ttl": 7200}
    size = args.size
    result = []
    for w in range(args.procs):
        plan = dict(base, worker=w, source=f"127.0.0.{2 + w}")
        if scenario == "fanout":
            plan.update(subscribers=slices(size["subscribers"], args.procs)[w], publisher=w == 0,
                        rate=size["fanout_rate"] if w == 0 else 0.0)
        elif scenario == "pairs":
            first, end = slices(size["pairs"], args.procs)[w]
            plan.update(pairs=(first, end), rate=size["pairs_rate"] * (end - first) / size["pairs"])
        else:
            plan.update(storm=slices(size["connections"], args.procs)[w])
        result.append(plan)
    return result


def totals(counts):
    """The workers' counts added up."""
    total = {"published": 0, "received": 0, "refused": 0, "closed_early": 0, "refusals": {}, "other_frames": {},
             "sent_bytes": None, "delivered_bytes": None, "cpu_seconds": 0.0}
    for c in counts:
        for key in ("published", "received", "refused", "closed_early", "cpu_seconds"):
            total[key] += c[key]
        for key in ("refusals", "other_frames"):
            for name, n in c[key].items():
                total[key][name] = total[key].get(name, 0) + n
        for key in ("sent_bytes", "delivered_bytes"):
            total[key] = total[key] or c[key]
    return total


def publish_and_drain(workers, plan_list, seconds, watchers, drain_seconds):
    """Publishes for `seconds` at each worker's rate, then waits until everything accepted has been delivered (or
    `drain_seconds` have passed). Returns the counts before and after, and the timings."""
    before = totals(workers.ask({"do": "counts"}, 30))
    published = workers.ask([{"do": "publish", "seconds": seconds, "rate": p["rate"]} for p in plan_list], seconds + 60)
    stopped = time.monotonic()
    while True:
        after = totals(workers.ask({"do": "counts"}, 30))
        accepted = (after["published"] - after["refused"]) - (before["published"] - before["refused"])
        expected = accepted * watchers
        delivered = after["received"] - before["received"]
        if delivered >= expected or time.monotonic() - stopped > drain_seconds:
            break
        time.sleep(0.05)
    return {"before": before, "after": after, "expected": expected, "delivered": delivered,
            "lost": max(0, expected - delivered), "publish_seconds": max(p["seconds"] for p in published),
            "driver_publish_cpu_seconds": round(sum(p["cpu_seconds"] for p in published), 3),
            "drain_seconds": round(time.monotonic() - stopped, 3)}


def load_run(server, scenario, args):
    """fanout or pairs against `server`: set-up, warm-up, then the measured window."""
    size = args.size
    plan_list = plans(server, scenario, args)
    setup_timeout = 120 + max(size["subscribers"], size["pairs"] * 2) / 20
    workers = Workers(plan_list)
    try:
        ready = workers.answers(setup_timeout)
        failed = sum(r["failed"] for r in ready)
        if failed:
            first = next(r["first_failure"] for r in ready if r["first_failure"])
            raise RuntimeError(f"{failed} connection(s) failed to set up; first: {first}")
        watchers = size["subscribers"] if scenario == "fanout" else 1
        warm = publish_and_drain(workers, plan_list, args.warmup, watchers, args.drain) if args.warmup > 0 else None
        cpu_before, started = server.cpu_seconds(), time.monotonic()
        window = publish_and_drain(workers, plan_list, size["seconds"], watchers, args.drain)
        cpu_after, ended = server.cpu_seconds(), time.monotonic()
        rss = server.rss_kb()
        closed = workers.ask({"do": "close"}, 120)
    finally:
        workers.stop()
    before, after = window["before"], window["after"]
    published = after["published"] - before["published"]
    refused = after["refused"] - before["refused"]
    cpu = cpu_after - cpu_before
    return {
        "connections": sum(r["ready"] for r in ready), "set_up_seconds": max(r["seconds"] for r in ready),
        "warmup": {"seconds": args.warmup, "published": warm["after"]["published"] - warm["before"]["published"] if warm else 0,
                   "expected": warm["expected"] if warm else 0, "delivered": warm["delivered"] if warm else 0,
                   "lost": warm["lost"] if warm else 0},
        "window": {"publish_seconds": window["publish_seconds"], "published": published,
                   "achieved_rate": round(published / max(0.001, window["publish_seconds"]), 1), "refused": refused,
                   "refusals": after["refusals"], "expected": window["expected"], "delivered": window["delivered"],
                   "lost": window["lost"], "drain_seconds": window["drain_seconds"], "wall_seconds": round(ended - started, 3),
                   "other_frames": after["other_frames"], "closed_early": after["closed_early"]},
        "cpu_seconds": round(cpu, 3),
        "cpu_us_per_delivery": round(cpu / window["delivered"] * 1e6, 2) if window["delivered"] else None,
        "server_cores": round(cpu / max(0.001, ended - started), 3),
        "driver_cpu_seconds": round(after["cpu_seconds"] - before["cpu_seconds"], 3),
        "driver_cores": round((after["cpu_seconds"] - before["cpu_seconds"]) / max(0.001, ended - started), 3),
        "rss_kb": rss,
        "frame_bytes": {"sent": after["sent_bytes"], "delivered": after["delivered_bytes"]},
        "close_seconds": max(c["seconds"] for c in closed),
    }


def connect_run(server, scenario, args):
    """The connect storm against `server`: every worker starts at once; the rate is all connections opened over
    the time from the first worker's start to the last one's end."""
    count = args.size["connections"]
    workers = Workers(plans(server, scenario, args))
    try:
        workers.answers(120)  # the tokens are minted before anything is timed
        cpu_before, rss_before = server.cpu_seconds(), server.rss_kb()
        storm = workers.ask({"do": "storm"}, 120 + count / 20)
        cpu_after, rss_after = server.cpu_seconds(), server.rss_kb()
        closed = workers.ask({"do": "close"}, 120 + count / 50)
    finally:
        workers.stop()
    connected = sum(s["connected"] for s in storm)
    failed = sum(s["failed"] for s in storm)
    seconds = max(s["ended"] for s in storm) - min(s["started"] for s in storm)
    cpu = cpu_after - cpu_before
    return {
        "connections": count, "connected": connected, "failed": failed,
        "first_failure": next((s["first_failure"] for s in storm if s["first_failure"]), None),
        "storm_seconds": round(seconds, 3), "connections_per_second": round(connected / max(0.001, seconds), 1),
        "cpu_seconds": round(cpu, 3), "cpu_us_per_connection": round(cpu / connected * 1e6, 2) if connected else None,
        "server_cores": round(cpu / max(0.001, seconds), 3),
        "driver_cpu_seconds": round(sum(s["cpu_seconds"] for s in storm), 3),
        "driver_cores": round(sum(s["cpu_seconds"] for s in storm) / max(0.001, seconds), 3),
        "handshake_ms_by_worker": [s["handshake_ms"] for s in storm],
        "rss_kb_before": rss_before, "rss_kb_after": rss_after,
        "kb_per_connection": round((rss_after - rss_before) / connected, 2) if connected else None,
        "close_seconds": max(c["seconds"] for c in closed),
    }


def one_run(server_type, binary, folder, scenario, round_number, args):
    """One scenario against a fresh server of `server_type`; a failure is recorded in the run, not raised."""
    record = {"round": round_number, "scenario": scenario, "target": server_type.kind, "loadavg_before": os.getloadavg()}
    server = None
    try:
        server = server_type(binary, folder, f"{server_type.kind}-{round_number}-{scenario}")
        record["pid"] = server.pid
        server.prepare(scenario, args.size["subscribers"] if scenario == "fanout" else args.size["pairs"])
        record.update((connect_run if scenario == "connect" else load_run)(server, scenario, args))
    except Exception as error:  # noqa: BLE001  (the round goes on; the report says what failed)
        record["error"] = f"{type(error).__name__}: {error}"
        if server is not None:
            record["server_log_tail"] = server.log_tail()
    finally:
        if server is not None:
            server.stop()
    record["loadavg_after"] = os.getloadavg()
    return record


def one_line(run):
    where = f"round {run['round']} {run['scenario']:7} {run['target']:8}"
    if "error" in run:
        return f"{where} FAILED: {run['error']}"
    if run["scenario"] == "connect":
        return (f"{where} {run['connected']:,} connected, {run['failed']} failed, {run['connections_per_second']:,.0f}/s, "
                f"{run['cpu_us_per_connection']} µs CPU per connection")
    w = run["window"]
    return (f"{where} {w['delivered']:,} delivered, {w['lost']} lost, {w['achieved_rate']:,.0f} published/s, "
            f"{run['cpu_us_per_delivery']} µs CPU per delivery, last delivery {w['drain_seconds']:.1f} s after the last publish")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def driver_description(procs):
    uvloop = importlib.util.find_spec("uvloop") is not None
    version = importlib.metadata.version("uvloop") if uvloop else None
    return {"python": platform.python_version(), "websockets": importlib.metadata.version("websockets"), "uvloop": version,
            "loop": f"uvloop {version}" if uvloop else "asyncio's own loop (uvloop is not installed)", "procs": procs}


def write(report, out):
    report["summary"] = neutral_report.summarise(report["runs"])
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(neutral_report.markdown(report) + "\n")


def main():
    args = parse_arguments()
    # SIGTERM ends the run like Ctrl-C: through the `finally`s that stop every worker and server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    report = {
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(sys.argv), "driver": driver_description(args.procs),
        "machine": {"cores": os.cpu_count(), "kernel": platform.release(), "loadavg": os.getloadavg()},
        "binaries": {"broker": {"path": os.path.abspath(args.broker), "sha256": sha256(args.broker)},
                     "baseline": {"path": os.path.abspath(args.baseline), "sha256": sha256(args.baseline)}},
        "sizes": args.sizes, "rounds": args.rounds,
        "parameters": dict(args.size, procs=args.procs, concurrency=args.concurrency, warmup=args.warmup, drain=args.drain),
        "runs": [],
    }
    print(f"driver: {report['driver']['loop']}, websockets {report['driver']['websockets']}, {args.procs} processes", file=sys.stderr)
    folder = tempfile.mkdtemp(prefix="lb-neutral-bench-")
    try:
        for round_number in range(1, args.rounds + 1):
            for scenario in args.scenarios:
                for server_type, binary in ((BrokerServer, args.broker), (BaselineServer, args.baseline)):
                    run = one_run(server_type, binary, folder, scenario, round_number, args)
                    report["runs"].append(run)
                    print(one_line(run), file=sys.stderr, flush=True)
                    write(report, args.out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    write(report, args.out)
    with open(os.path.join(args.out, "report.md")) as f:
        print(f.read())
    print(f"reports: {args.out}/report.json, {args.out}/report.md", file=sys.stderr)
    bad = [r for r in report["runs"] if neutral_report.lost(r) != 0]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
