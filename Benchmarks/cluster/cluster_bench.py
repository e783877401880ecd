#!/usr/bin/env python3
"""Cross-node latency and the NOTIFY ceiling of a location-broker cluster on this machine.

Starts a throwaway PostgreSQL (initdb in a temporary folder, as the postgres user when run as root), two broker
nodes on it, then:
  1. latency: P volunteer/donor pairs publishing at a total rate for D seconds, donors on the volunteers' node
     (same-node reference) and then donors on the other node (cross-node); publish-to-delivery p50/p90/p99/max
     measured in this one process (one clock), losses counted;
  2. revocation: pauses donations through node a's API and times when their donors on node b are told;
  3. ceiling: pgbench sends position events with pg_notify as fast as it can (one per transaction, then
     batches of 100) while both nodes listen; reports events/s sent and events/s each node took in.
Prints a JSON report (and writes it to --report).
"""
import argparse, asyncio, glob, json, os, pwd, re, shutil, subprocess, sys, tempfile, time

import websockets

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_common import Node, PublishLedger, free_port, percentile, put_donation, token  # noqa: E402  (shard_bench.py uses them through this module)


class Postgres:
    def __init__(self):
        versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
        if not versions:
            sys.exit("PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)")
        self.bin = os.path.dirname(versions[-1])
        self.folder = tempfile.mkdtemp(prefix="lb-cluster-bench-")
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            account = pwd.getpwnam("postgres")
            os.chown(self.folder, account.pw_uid, account.pw_gid)
        self.run("initdb", "-D", f"{self.folder}/data", "-U", "lb", "-A", "trust", "-E", "UTF8")
        self.run("pg_ctl", "-D", f"{self.folder}/data", "-l", f"{self.folder}/server.log", "-w",
                 "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=200", "start")
        self.run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "lb", "-d", "postgres", "-c", "CREATE DATABASE bench")
        self.url = f"postgres://lb@127.0.0.1:{self.port}/bench"

    def command(self, tool, *args):
        command = [f"{self.bin}/{tool}", *args]
        return ["runuser", "-u", "postgres", "--", *command] if self.as_postgres else command

    def run(self, tool, *args):
        subprocess.run(self.command(tool, *args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def committed(self):
        """Transactions committed in the bench database so far (pg_stat_database, flushed within a second)."""
        output = subprocess.run(self.command("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "lb", "-d", "bench", "-At", "-c",
                                             "SELECT xact_commit FROM pg_stat_database WHERE datname = 'bench'"),
                                capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL).stdout
        return int(output.strip())

    def cpu_seconds(self):
        """CPU of the postmaster's children alive now (the nodes' sessions are long-lived), user + system."""
        with open(f"{self.folder}/data/postmaster.pid") as f:
            postmaster = f.readline().strip()
        total = 0
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                with open(stat) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == postmaster:
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self):
        subprocess.run(self.command("pg_ctl", "-D", f"{self.folder}/data", "-m", "immediate", "stop"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.folder, ignore_errors=True)


async def latency_run(postgres, publish_node, watch_node, pairs, rate, seconds, label):
    ledger, received = PublishLedger(), {}
    volunteers, donors = [], []
    for i in range(pairs):
        v = await websockets.connect(f"ws://127.0.0.1:{publish_node.port}/v1/ws?token={token(f'vol{i}@bench.example')}", max_queue=None)
        d = await websockets.connect(f"ws://127.0.0.1:{watch_node.port}/v1/ws?token={token(f'donor{i}@bench.example')}", max_queue=None)
        await v.recv(); await d.recv()  # welcome
        await d.send(json.dumps({"type": "subscribe", "id": "s", "donation": f"b-{i}"}))
        reply = json.loads(await d.recv())
        if reply.get("type") != "subscribed":
            sys.exit(f"subscribe failed on the watching node: {reply}")
        volunteers.append(v); donors.append(d)

    async def read_donor(d):
        async for message in d:
            now = time.perf_counter()
            frame = json.loads(message)
            if frame.get("type") == "position":
                received[PublishLedger.key(frame)] = now

    async def read_volunteer(i, v):
        async for message in v:
            frame = json.loads(message)
            if frame.get("type") == "ack" and frame.get("seq") is not None:
                ledger.acknowledged(frame["re"])

    readers = [asyncio.create_task(read_donor(d)) for d in donors] + [asyncio.create_task(read_volunteer(i, v)) for i, v in enumerate(volunteers)]
    cpu_before = (publish_node.cpu_seconds(), watch_node.cpu_seconds())
    commits_before, postgres_cpu_before = (postgres.committed(), postgres.cpu_seconds()) if postgres else (0, 0)
    print(f"publishing: {label}", file=sys.stderr, flush=True)
    interval = 1.0 / rate
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        i = n % pairs
        message_id = f"{n}"
        timestamp = ledger.stamp(f"vol{i}@bench.example", message_id)
        await volunteers[i].send(json.dumps({"type": "publish", "id": message_id, "position": {
            "lat": -34.6 + (n % 100) * 1e-5, "lon": -58.38, "accuracy": 5, "speed": 8, "heading": 90, "timestamp": timestamp}}))
        n += 1
        delay = start + n * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
    await asyncio.sleep(2)  # let the last ones arrive
    cpu_after = (publish_node.cpu_seconds(), watch_node.cpu_seconds())
    commits, postgres_cpu = (postgres.committed() - commits_before, postgres.cpu_seconds() - postgres_cpu_before) if postgres else (0, 0)
    for task in readers:
        task.cancel()
    for ws in volunteers + donors:
        await ws.close()
    sent = ledger.sent
    latencies = [(received[key] - t) * 1000 for key, t in sent.items() if key in received]
    lost = sum(1 for key in sent if key not in received)
    # Each node counted once: with donors on the volunteers' node both pairs of readings are the same process.
    cpu = cpu_after[0] - cpu_before[0] + (cpu_after[1] - cpu_before[1] if watch_node is not publish_node else 0)
    return {
        "label": label, "pairs": pairs, "rate": rate, "seconds": seconds, "published": n, "acknowledged": len(sent),
        "delivered": len(latencies), "lost": lost,
        "p50_ms": round(percentile(latencies, 50), 3), "p90_ms": round(percentile(latencies, 90), 3),
        "p99_ms": round(percentile(latencies, 99), 3), "max_ms": round(max(latencies), 3),
        "broker_cpu_us_per_delivery": round(cpu / max(1, len(latencies)) * 1e6, 1),
        "cpu_seconds_publishing_node": round(cpu_after[0] - cpu_before[0], 3),
        "cpu_seconds_watching_node": round(cpu_after[1] - cpu_before[1], 3) if watch_node is not publish_node else None,
        "postgres_transactions_per_position": round(commits / max(1, n), 3),
        "postgres_cpu_us_per_position": round(postgres_cpu / max(1, n) * 1e6, 1),
    }


async def revocation_run(api_node, watch_node, count):
    """Pauses donations through one node's API; measures when their donors on another node hear of it."""
    before_reply, after_reply = [], []
    loop = asyncio.get_running_loop()
    for i in range(count):
        d = await websockets.connect(f"ws://127.0.0.1:{watch_node.port}/v1/ws?token={token(f'donor{i}@bench.example')}", max_queue=None)
        await d.recv()
        await d.send(json.dumps({"type": "subscribe", "id": "s", "donation": f"b-{i}"}))
        reply = json.loads(await d.recv())
        if reply.get("type") != "subscribed":
            sys.exit(f"subscribe failed: {reply}")

        async def wait_for_state():
            async for message in d:
                if json.loads(message).get("type") == "state":
                    return time.perf_counter()

        waiter = asyncio.create_task(wait_for_state())
        sent = time.perf_counter()
        await loop.run_in_executor(None, lambda: put_donation(api_node, f"b-{i}", f"vol{i}@bench.example", f"donor{i}@bench.example", "PICKED-BY-VOLUNTEER"))
        replied = time.perf_counter()
        heard = await asyncio.wait_for(waiter, 10)
        before_reply.append((heard - sent) * 1000)
        after_reply.append((heard - replied) * 1000)
        await d.close()
    return {"donations": count,
            "put_sent_to_donor_told_ms": {"p50": round(percentile(before_reply, 50), 3), "p99": round(percentile(before_reply, 99), 3), "max": round(max(before_reply), 3)},
            "put_reply_to_donor_told_ms": {"p50": round(percentile(after_reply, 50), 3), "p99": round(percentile(after_reply, 99), 3), "max": round(max(after_reply), 3)},
            "told_before_the_reply": sum(1 for x in after_reply if x <= 0)}


def notify_ceiling(postgres, nodes, seconds, batch):
    # Distinct payloads: PostgreSQL delivers identical notifications of one transaction only once.
    payload = json.dumps({"k": "p", "n": "pgbench", "c": "nobody@bench.example", "s": 123456789, "ls": 1, "t": ["none"],
                          "p": {"lat": -34.6037, "lon": -58.3816, "accuracy": 5.0, "speed": 8.0, "heading": 90.0, "timestamp": 1}})
    head, tail = payload.replace("'", "''").split("123456789")
    script = os.path.join(postgres.folder, f"notify-{batch}.sql")
    with open(script, "w") as f:
        if batch == 1:
            f.write("\\set s random(1, 1000000000)\n")
            f.write(f"SELECT pg_notify('lb_events', '{head}' || :s || '{tail}');\n")
        else:
            f.write(f"SELECT pg_notify('lb_events', '{head}' || g || '{tail}') FROM generate_series(1, {batch}) AS g;\n")
    os.chmod(script, 0o644)
    before = [node.metric('broker_cluster_events_in_total{kind="position"}') for node in nodes]
    started = time.time()
    output = subprocess.run(postgres.command("pgbench", "-h", "127.0.0.1", "-p", str(postgres.port), "-U", "lb", "-n", "-c", "4", "-j", "2",
                                             "-T", str(seconds), "-f", script, "bench"), capture_output=True, text=True, check=True).stdout
    transactions = int(re.search(r"number of transactions actually processed: (\d+)", output).group(1))
    sent_per_second = transactions * batch / seconds
    # Let the nodes drain PostgreSQL's queue, then count what they took in.
    deadline = time.time() + 120
    expected = transactions * batch
    while time.time() < deadline:
        taken = [node.metric('broker_cluster_events_in_total{kind="position"}') - b for node, b in zip(nodes, before)]
        if min(taken) >= expected:
            break
        time.sleep(0.5)
    drained = time.time()
    return {"batch": batch, "sent": expected, "sent_per_second": round(sent_per_second),
            "taken_in_by_each_node": [round(t) for t in taken],
            "each_node_took_in_per_second": round(min(taken) / (drained - started)),
            "payload_bytes": len(payload)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--broker", required=True, help="path of a built location-broker")
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--rate", type=float, default=200, help="positions per second in total")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--notify-seconds", type=int, default=10, help="0 skips the NOTIFY-ceiling part")
    parser.add_argument("--report", help="write the JSON report here too")
    parser.add_argument("--sqlite-reference", action="store_true",
                        help="first measure one node on SQLite with the same pairs, rate and driver (the cluster's yardstick)")
    args = parser.parse_args()

    postgres = Postgres()
    folder = tempfile.mkdtemp(prefix="lb-cluster-nodes-")
    nodes = []
    try:
        nodes = [Node(args.broker, "a", postgres.url, folder), Node(args.broker, "b", postgres.url, folder)]
        print(f"nodes: a pid {nodes[0].process.pid}, b pid {nodes[1].process.pid}", file=sys.stderr, flush=True)
        for i in range(args.pairs):
            put_donation(nodes[0], f"b-{i}", f"vol{i}@bench.example", f"donor{i}@bench.example")
        time.sleep(0.5)
        report = {"machine": {"cores": os.cpu_count(), "postgres": os.path.basename(os.path.dirname(postgres.bin))}}
        if args.sqlite_reference:
            single = Node(args.broker, "single", None, folder)
            try:
                for i in range(args.pairs):
                    put_donation(single, f"b-{i}", f"vol{i}@bench.example", f"donor{i}@bench.example")
                report["one_sqlite_node"] = asyncio.run(latency_run(None, single, single, args.pairs, args.rate, args.seconds, "one SQLite node"))
            finally:
                single.stop()
        report["same_node"] = asyncio.run(latency_run(postgres, nodes[0], nodes[0], args.pairs, args.rate, args.seconds, "donors on the volunteers' node"))
        report["cross_node"] = asyncio.run(latency_run(postgres, nodes[0], nodes[1], args.pairs, args.rate, args.seconds, "donors on the other node"))
        report["revocation"] = asyncio.run(revocation_run(nodes[0], nodes[1], min(args.pairs, 50)))
        if args.notify_seconds > 0:
            report["notify"] = [notify_ceiling(postgres, nodes, args.notify_seconds, batch) for batch in (1, 100)]
        text = json.dumps(report, indent=2)
        print(text)
        if args.report:
            with open(args.report, "w") as f:
                f.write(text + "\n")
    finally:
        for node in nodes:
            node.stop()
        postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
