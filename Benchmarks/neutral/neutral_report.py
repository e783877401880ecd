"""neutral_bench.py's summary: per scenario and round, the broker's figure, the baseline's and their ratio, the
median of the ratios, and the same as a Markdown table."""
import statistics

# Per scenario, the figures compared: (key in a run's record, label, unit, whether higher is better).
FIGURES = {
    "fanout": [("cpu_us_per_delivery", "server CPU per delivery", "µs", False)],
    "pairs": [("cpu_us_per_delivery", "server CPU per delivery", "µs", False)],
    "connect": [("connections_per_second", "connections per second", "/s", True),
                ("cpu_us_per_connection", "server CPU per connection", "µs", False)],
}


def summarise(runs):
    """Pairs each round's broker run with its baseline run, per scenario and figure."""
    summary = {}
    for scenario, figures in FIGURES.items():
        rounds = sorted({r["round"] for r in runs if r["scenario"] == scenario})
        if not rounds:
            continue
        entry = {}
        for key, label, unit, _ in figures:
            rows = []
            for n in rounds:
                broker = find(runs, n, scenario, "broker")
                baseline = find(runs, n, scenario, "baseline")
                b, a = value(broker, key), value(baseline, key)
                rows.append({"round": n, "broker": b, "baseline": a,
                             "ratio": round(b / a, 3) if b is not None and a else None,
                             "broker_lost": lost(broker), "baseline_lost": lost(baseline)})
            ratios = [row["ratio"] for row in rows if row["ratio"] is not None]
            entry[key] = {"label": label, "unit": unit, "rounds": rows,
                          "median_ratio": round(statistics.median(ratios), 3) if ratios else None}
        summary[scenario] = entry
    return summary


def find(runs, round_number, scenario, target):
    return next((r for r in runs if r["round"] == round_number and r["scenario"] == scenario and r["target"] == target), None)


def value(run, key):
    return None if run is None or "error" in run else run.get(key)


def lost(run):
    """What a run lost or failed: deliveries for the load scenarios, connections for the storm; None for a run that
    did not finish."""
    if run is None or "error" in run:
        return None
    if run["scenario"] == "connect":
        return run["failed"]
    return run["window"]["lost"] + run["warmup"]["lost"]


def markdown(report):
    """The report's summary as Markdown: one table per scenario and figure, then any run that failed."""
    d = report["driver"]
    lines = ["# Neutral driver: broker ÷ bare SwiftNIO baseline",
             "",
             f"{report['started']}, {d['procs']} worker processes of Python {d['python']} with websockets {d['websockets']} "
             f"on {d['loop']}, {report['machine']['cores']} cores, {report['rounds']} round(s) "
             "(broker then baseline in each, a fresh server per run). × is broker ÷ baseline in the same round.",
             ""]
    p = report["parameters"]
    titles = {
        "fanout": f"fanout: 1 publisher, {p['subscribers']:,} subscribers on one channel, {p['fanout_rate']:g} positions/s for {p['seconds']:g} s",
        "pairs": f"pairs: {p['pairs']:,} publisher/subscriber pairs, {p['pairs_rate']:,g} positions/s in all for {p['seconds']:g} s",
        "connect": f"connect: a storm of {p['connections']:,} connections, {p['concurrency']} in flight per worker",
    }
    for scenario, entry in report["summary"].items():
        lines += [f"## {titles[scenario]}", ""]
        for key, figure in entry.items():
            lines += [f"| Round | {figure['label']}, broker ({figure['unit']}) | baseline ({figure['unit']}) | × | lost or failed: broker / baseline |",
                      "|---|---|---|---|---|"]
            for row in figure["rounds"]:
                lines.append(f"| {row['round']} | {fmt(row['broker'])} | {fmt(row['baseline'])} | {ratio(row['ratio'])} | "
                             f"{fmt(row['broker_lost'])} / {fmt(row['baseline_lost'])} |")
            lines += [f"| median of × | | | **{ratio(figure['median_ratio'])}** | |", ""]
        lines += load(report["runs"], scenario)
    failed = [r for r in report["runs"] if "error" in r]
    if failed:
        lines += ["## Runs that did not finish", ""]
        lines += [f"- round {r['round']}, {r['scenario']}, {r['target']}: {r['error']}" for r in failed]
        lines.append("")
    return "\n".join(lines)


def load(runs, scenario):
    """What each run asked of the machine: the server's and the driver's cores over the window, and for the load
    scenarios the publish rate reached and how long the last deliveries took once publishing stopped (a driver
    that cannot keep up shows here first)."""
    done = [r for r in runs if r["scenario"] == scenario and "error" not in r]
    if not done:
        return []
    if scenario == "connect":
        lines = ["| Round | Target | Connected | Seconds | Server cores | Driver cores |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['round']} | {r['target']} | {r['connected']:,} | {r['storm_seconds']:.2f} | {r['server_cores']:.2f} | "
                  f"{r['driver_cores']:.2f} |" for r in done]
    else:
        lines = ["| Round | Target | Published/s | Delivered | Last delivery after the last publish (s) | Server cores | Driver cores |",
                 "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['round']} | {r['target']} | {r['window']['achieved_rate']:,.0f} | {r['window']['delivered']:,} | "
                  f"{r['window']['drain_seconds']:.2f} | {r['server_cores']:.2f} | {r['driver_cores']:.2f} |" for r in done]
    return lines + [""]


def fmt(x):
    if x is None:
        return "—"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def ratio(x):
    return "—" if x is None else f"×{x:.2f}"
