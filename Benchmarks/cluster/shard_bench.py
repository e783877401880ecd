#!/usr/bin/env python3
"""Per-node cost of a location-broker cluster of 1, 2 and 4 nodes at a fixed total position rate.

For each node count N: a throwaway PostgreSQL, N broker nodes on it, V volunteer/donor pairs. Volunteer i publishes
through node i mod N; donor i watches through node i*N div V, so each node's donors watch 1/N of the volunteers
(contiguous, hence spread over the bus shards as the keyed hash spreads them). The volunteers publish round-robin
at --rate positions/s in total for --seconds. Reported per node: CPU seconds (user+system, /proc), positions
delivered to its donors, CPU microseconds per delivery, and positions it opened from the bus
(broker_cluster_events_in_total{kind="position"}); and for the whole run the publish-to-delivery latency
percentiles (one clock: this process) and losses.

Usage: shard_bench.py --broker .build/debug/location-broker [--nodes 1,2,4] [--volunteers 64] [--rate 400] [--seconds 15]
"""
import argparse, asyncio, importlib.util, json, os, shutil, sys, tempfile, time

import websockets

spec = importlib.util.spec_from_file_location("cluster_bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "cluster_bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


async def run(nodes, volunteers, rate, seconds):
    count = len(nodes)
    ledger, received = bench.PublishLedger(), {}
    publishers, watchers = [], []
    for i in range(volunteers):
        v = await websockets.connect(f"ws://127.0.0.1:{nodes[i % count].port}/v1/ws?token={bench.token(f'vol{i}@bench.example')}", max_queue=None)
        watch_node = i * count // volunteers
        d = await websockets.connect(f"ws://127.0.0.1:{nodes[watch_node].port}/v1/ws?token={bench.token(f'donor{i}@bench.example')}", max_queue=None)
        await v.recv(); await d.recv()  # welcome
        deadline = time.time() + 10
        while True:
            await d.send(json.dumps({"type": "subscribe", "id": "s", "donation": f"b-{i}"}))
            reply = json.loads(await d.recv())
            if reply.get("type") == "subscribed":
                break
            if time.time() > deadline:
                sys.exit(f"subscribe failed on node {watch_node}: {reply}")
            await asyncio.sleep(0.05)
        publishers.append(v); watchers.append((watch_node, d))

    delivered = [0] * count

    async def read_donor(node, d):
        async for message in d:
            now = time.perf_counter()
            frame = json.loads(message)
            if frame.get("type") == "position":
                received[bench.PublishLedger.key(frame)] = now
                delivered[node] += 1

    async def read_volunteer(i, v):
        async for message in v:
            frame = json.loads(message)
            if frame.get("type") == "ack" and frame.get("seq") is not None:
                ledger.acknowledged(frame["re"])

    readers = [asyncio.create_task(read_donor(n, d)) for n, d in watchers] + [asyncio.create_task(read_volunteer(i, v)) for i, v in enumerate(publishers)]
    await asyncio.sleep(1)
    cpu_before = [node.cpu_seconds() for node in nodes]
    opened_before = [node.metric('broker_cluster_events_in_total{kind="position"}') for node in nodes]
    delivered_before = list(delivered)
    interval = 1.0 / rate
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        i = n % volunteers
        timestamp = ledger.stamp(f"vol{i}@bench.example", f"{n}")
        await publishers[i].send(json.dumps({"type": "publish", "id": f"{n}", "position": {
            "lat": -34.6 + (n % 100) * 1e-5, "lon": -58.38, "accuracy": 5, "speed": 8, "heading": 90, "timestamp": timestamp}}))
        n += 1
        delay = start + n * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
    elapsed = time.perf_counter() - start
    await asyncio.sleep(2)  # let the last ones arrive
    cpu = [node.cpu_seconds() - b for node, b in zip(nodes, cpu_before)]
    opened = [node.metric('broker_cluster_events_in_total{kind="position"}') - b for node, b in zip(nodes, opened_before)]
    shards = [node.metric("broker_cluster_shards_listened") for node in nodes]
    deliveries = [d - b for d, b in zip(delivered, delivered_before)]
    for task in readers:
        task.cancel()
    for ws in publishers + [d for _, d in watchers]:
        await ws.close()
    sent = ledger.sent
    latencies = [(received[key] - t) * 1000 for key, t in sent.items() if key in received]
    return {
        "nodes": count, "volunteers": volunteers, "rate": rate, "seconds": seconds, "achieved_rate": round(n / elapsed),
        "published": n, "acknowledged": len(sent), "delivered": len(latencies), "lost": sum(1 for key in sent if key not in received),
        "p50_ms": round(bench.percentile(latencies, 50) or 0, 3), "p99_ms": round(bench.percentile(latencies, 99) or 0, 3),
        "per_node": [{"node": i, "cpu_s": round(cpu[i], 2), "deliveries": deliveries[i],
                      "cpu_us_per_delivery": round(cpu[i] / max(1, deliveries[i]) * 1e6, 1),
                      "positions_opened_from_bus": round(opened[i]), "shards_listened": shards[i]} for i in range(count)],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--broker", required=True, help="path of a built location-broker")
    parser.add_argument("--nodes", default="1,2,4")
    parser.add_argument("--volunteers", type=int, default=64)
    parser.add_argument("--rate", type=float, default=400, help="positions per second in total")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--report", help="write the JSON report here too")
    args = parser.parse_args()
    report = {"broker": args.broker, "machine": {"cores": os.cpu_count()}, "runs": []}
    for count in [int(x) for x in args.nodes.split(",")]:
        postgres = bench.Postgres()
        folder = tempfile.mkdtemp(prefix="lb-shard-nodes-")
        nodes = []
        try:
            nodes = [bench.Node(args.broker, f"n{i}", postgres.url, folder) for i in range(count)]
            for i in range(args.volunteers):
                bench.put_donation(nodes[0], f"b-{i}", f"vol{i}@bench.example", f"donor{i}@bench.example")
            result = asyncio.run(run(nodes, args.volunteers, args.rate, args.seconds))
            print(json.dumps(result), flush=True)
            report["runs"].append(result)
        finally:
            for node in nodes:
                node.stop()
            postgres.stop()
            shutil.rmtree(folder, ignore_errors=True)
    text = json.dumps(report, indent=2)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
