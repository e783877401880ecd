"""The two servers neutral_bench.py measures, started fresh for every scenario of every round.

- `BrokerServer`: the broker as the cluster bench starts it (bench_common.Node: SQLite in a temporary folder, the
  bench's secrets, a config of defaults, the publish limit raised out of the way, a port of its choice), with the
  scenario's donations created through the backend API so that its donors may subscribe.
- `BaselineServer`: Benchmarks/BaselineServer's `baseline-server --port 0`, its port read from `listening on PORT`.
"""
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
import neutral_frames as frames  # noqa: E402
from bench_common import Node, cpu_seconds, put_donation, rss_kb, stop_process  # noqa: E402


class BrokerServer:
    kind = "broker"

    def __init__(self, binary, folder, name):
        self.node = Node(binary, name, None, folder)
        self.pid = self.node.process.pid
        self.port = self.node.port

    def prepare(self, scenario, size):
        """Creates the donations `scenario` subscribes to: one per fan-out watcher, all carried by the fan-out's
        volunteer, or one per pair. Eight requests in flight."""
        if scenario == "fanout":
            volunteer, _ = frames.fanout_volunteer()
            donations = [(donation, volunteer, donor) for donor, donation in map(frames.fanout_watcher, range(size))]
        elif scenario == "pairs":
            donations = [(donation, volunteer, donor) for volunteer, donor, donation, _ in map(frames.pair, range(size))]
        else:
            return
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda d: put_donation(self.node, d[0], d[1], d[2]), donations))

    def cpu_seconds(self):
        return cpu_seconds(self.pid)

    def rss_kb(self):
        return rss_kb(self.pid)

    def log_tail(self):
        """The end of the broker's log, for a run that failed."""
        self.node.log.seek(0)
        return self.node.log.read()[-2000:]

    def stop(self):
        self.node.stop()


class BaselineServer:
    kind = "baseline"

    def __init__(self, binary, folder, name):
        self.log = open(os.path.join(folder, f"{name}.log"), "w+")
        self.process = subprocess.Popen([binary, "--port", "0"], stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.pid = self.process.pid
        deadline = time.time() + 30
        while time.time() < deadline:
            self.log.seek(0)
            for line in self.log.read().splitlines():
                if line.startswith("listening on "):
                    self.port = int(line.split()[-1])
                    return
            if self.process.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"baseline-server exited: {self.log.read()}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("baseline-server did not listen within 30 s")

    def prepare(self, scenario, size):
        """Nothing to prepare: the baseline has no donations and checks nothing."""

    def cpu_seconds(self):
        return cpu_seconds(self.pid)

    def rss_kb(self):
        return rss_kb(self.pid)

    def log_tail(self):
        """The end of the baseline's log, for a run that failed."""
        self.log.seek(0)
        return self.log.read()[-2000:]

    def stop(self):
        stop_process(self.process)
        self.log.close()
