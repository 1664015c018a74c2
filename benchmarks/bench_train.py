"""One training step (forward, backward, SGD with momentum) of mnn against torch and the
real MNN wheel.

Run: ``python benchmarks/bench_train.py [--repeat N] [--models lenet mlp] [--own-process]``.

Models: LeNet (MNN's MNIST example: conv 1->20 5x5, max pool, conv 20->50 5x5, max pool,
fc 800->500, fc 500->10) on a batch of 64 1x28x28 images, and a 3-layer MLP
(784->256->256->10) on 64 vectors; softmax cross entropy; SGD lr 0.01, momentum 0.9.

Timing: mnn, torch and MNN run in the same process at 1 and 2 threads, taking turns in
blocks of steps (a pause before each block lets the last peer's threads stop spinning);
each number is the median of ``--repeat`` steps after warm-up, and the ratio is
ours / theirs (below 1: mnn is faster). ``--clock cpu`` times the calling thread's CPU
time instead of wall time (1 thread only; for a loaded machine). The real MNN wheel needs
``lazy_eval(True)`` to train; it is timed the way its MNIST example runs.
``--own-process`` also times each peer alone in a fresh process, as a user runs it (in
one process, what a framework does to the process, such as mnn's heap settings in
mnn/express/heap.py, benefits the others too).

Memory: each framework runs the LeNet loop in its own subprocess and reports its peak
resident set size (``VmHWM``), imports included.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

BATCH = 64


def _data(kind, seed=0):
    rng = np.random.default_rng(seed)
    shape = (BATCH, 1, 28, 28) if kind == "lenet" else (BATCH, 784)
    x = rng.random(shape, dtype=np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)
    return x, y


# -- mnn --------------------------------------------------------------------------------

def mnn_step(kind):
    import mnn.expr as F
    from mnn import nn, optim

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.conv(1, 20, [5, 5])
            self.conv2 = nn.conv(20, 50, [5, 5])
            self.fc1 = nn.linear(800, 500)
            self.fc2 = nn.linear(500, 10)

        def forward(self, x):
            x = F.max_pool(F.relu(self.conv1(x)), [2, 2], [2, 2])
            x = F.max_pool(F.relu(self.conv2(x)), [2, 2], [2, 2])
            x = F.reshape(x, [0, -1])
            return self.fc2(F.relu(self.fc1(x)))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.linear(784, 256)
            self.fc2 = nn.linear(256, 256)
            self.fc3 = nn.linear(256, 10)

        def forward(self, x):
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    net = LeNet() if kind == "lenet" else MLP()
    opt = optim.SGD(net, 0.01, 0.9)
    x, y = _data(kind)

    def step():
        loss = nn.loss.softmax_cross_entropy(net(F.const(x)), F.const(y))
        opt.step(loss)

    return step, F.set_thread_number


# -- torch ------------------------------------------------------------------------------

def torch_step(kind):
    import torch

    tnn = torch.nn
    if kind == "lenet":
        net = tnn.Sequential(tnn.Conv2d(1, 20, 5), tnn.ReLU(), tnn.MaxPool2d(2),
                             tnn.Conv2d(20, 50, 5), tnn.ReLU(), tnn.MaxPool2d(2),
                             tnn.Flatten(), tnn.Linear(800, 500), tnn.ReLU(),
                             tnn.Linear(500, 10))
    else:
        net = tnn.Sequential(tnn.Linear(784, 256), tnn.ReLU(), tnn.Linear(256, 256),
                             tnn.ReLU(), tnn.Linear(256, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x, y = _data(kind)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y).long()

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(tx), ty).backward()
        opt.step()

    return step, torch.set_num_threads


# -- the real MNN wheel -----------------------------------------------------------------

def wheel_step(kind):
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # the wheel prints on import
        import MNN
    F, nn = MNN.expr, MNN.nn
    F.lazy_eval(True)  # the wheel trains only in lazy mode

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.conv(1, 20, [5, 5])
            self.conv2 = nn.conv(20, 50, [5, 5])
            self.fc1 = nn.linear(800, 500)
            self.fc2 = nn.linear(500, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.max_pool(x, [2, 2], [2, 2])
            x = F.relu(self.conv2(x))
            x = F.max_pool(x, [2, 2], [2, 2])
            x = F.convert(x, F.NCHW)
            x = F.reshape(x, [0, -1])
            x = F.relu(self.fc1(x))
            return F.softmax(self.fc2(x), 1)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.linear(784, 256)
            self.fc2 = nn.linear(256, 256)
            self.fc3 = nn.linear(256, 10)

        def forward(self, x):
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return F.softmax(self.fc3(x), 1)

    net = LeNet() if kind == "lenet" else MLP()
    opt = MNN.optim.SGD(net, 0.01, 0.9, 0.0)
    x, y = _data(kind)
    onehot = np.eye(10, dtype=np.float32)[y]

    def step():
        data = F.const(x.ravel().tolist(), list(x.shape), F.NCHW)
        if kind == "lenet":
            data = F.convert(data, F.NC4HW4)
        target = F.const(onehot.ravel().tolist(), [BATCH, 10], F.NCHW)
        loss = nn.loss.cross_entropy(net.forward(data), target)
        opt.step(loss)

    return step, F.set_thread_number


PEERS = {"mnn": mnn_step, "torch": torch_step, "MNN wheel": wheel_step}


_CLOCK = [time.perf_counter]


def _interleaved_ms(steps, repeat, rounds=3):
    """Median ms per step of each peer. The peers take turns in blocks (``rounds``
    blocks each, so load changes on a shared machine hit every peer alike), with a pause
    before each block: a peer's worker threads spinning after its last step would
    otherwise steal the cores from the next one."""
    for step in steps.values():
        for _ in range(3):
            step()
    clock = _CLOCK[0]
    times = {name: [] for name in steps}
    per_block = max(1, repeat // rounds)
    for _ in range(rounds):
        for name, step in steps.items():
            time.sleep(0.3)
            for _ in range(per_block):
                start = clock()
                step()
                times[name].append(clock() - start)
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


def time_all(models, repeat, peers):
    steps = {(name, kind): PEERS[name](kind) for name in peers for kind in models}
    for threads in (1, 2):
        print(f"\n{threads} thread(s): median ms per training step (batch {BATCH})")
        for kind in models:
            for name in peers:
                steps[(name, kind)][1](threads)
            row = _interleaved_ms({name: steps[(name, kind)][0] for name in peers}, repeat)
            cells = "  ".join(f"{n} {t:7.2f}" for n, t in row.items())
            ratios = "  ".join(f"ours/{n} {row['mnn'] / t:5.2f}" for n, t in row.items()
                               if n != "mnn")
            print(f"  {kind:6s} {cells}   {ratios}")


def _time_child(name, kind, threads, repeat):
    """Time ``repeat`` steps in this (fresh) process and print the median ms as JSON."""
    step, set_threads = PEERS[name](kind)
    set_threads(threads)
    for _ in range(3):
        step()
    times = []
    for _ in range(repeat):
        start = _CLOCK[0]()
        step()
        times.append(_CLOCK[0]() - start)
    print(json.dumps({"ms": statistics.median(times) * 1000}))


def time_own_process(models, repeat, peers, rounds=2):
    """Each peer alone in a fresh process, as a user runs it: nothing one framework does
    to the process (thread pools, allocator settings) touches the other. The peers take
    turns, ``rounds`` processes each; the lower median of a peer's rounds is kept."""
    here = os.path.abspath(__file__)
    for threads in (1, 2):
        print(f"\n{threads} thread(s), each peer in its own process: median ms per step")
        for kind in models:
            best = {}
            for _ in range(rounds):
                for name in peers:
                    out = subprocess.run([sys.executable, here, "--time-child", name, kind,
                                          str(threads), str(repeat)],
                                         capture_output=True, text=True, check=True)
                    ms = json.loads(out.stdout.strip().splitlines()[-1])["ms"]
                    best[name] = min(ms, best.get(name, ms))
            cells = "  ".join(f"{n} {t:7.2f}" for n, t in best.items())
            ratios = "  ".join(f"ours/{n} {best['mnn'] / t:5.2f}" for n, t in best.items()
                               if n != "mnn")
            print(f"  {kind:6s} {cells}   {ratios}")


def _child(name, kind, steps):
    """Run ``steps`` training steps and print the peak RSS in MB as JSON."""
    step, set_threads = PEERS[name](kind)
    set_threads(1)
    for _ in range(steps):
        step()
    print(json.dumps({"peak_mb": _peak_rss_kb() / 1024}))


def _peak_rss_kb():
    # VmHWM is this process's own high-water mark; ru_maxrss would carry the parent's
    # peak across exec on Linux.
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_all(peers, steps=20):
    print(f"\npeak memory, LeNet, {steps} steps, own process each (imports included)")
    here = os.path.abspath(__file__)
    for name in peers:
        out = subprocess.run([sys.executable, here, "--child", name, "lenet", str(steps)],
                             capture_output=True, text=True, check=True)
        peak = json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]
        print(f"  {name:10s} {peak:7.1f} MB")


def main():
    parser = argparse.ArgumentParser(description="training-step benchmark")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--models", nargs="+", default=["lenet", "mlp"],
                        choices=["lenet", "mlp"])
    parser.add_argument("--peers", nargs="+", default=list(PEERS), choices=list(PEERS))
    parser.add_argument("--child", nargs=3, metavar=("PEER", "MODEL", "STEPS"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--time-child", nargs=4,
                        metavar=("PEER", "MODEL", "THREADS", "REPEAT"), help=argparse.SUPPRESS)
    parser.add_argument("--own-process", action="store_true",
                        help="also time each peer alone in its own process")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: the calling thread's CPU time (steadier on a loaded "
                             "machine; meaningful at 1 thread only)")
    args = parser.parse_args()
    if args.clock == "cpu":
        _CLOCK[0] = time.thread_time
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return
    if args.time_child:
        name, kind, threads, repeat = args.time_child
        _time_child(name, kind, int(threads), int(repeat))
        return
    if "mnn" not in args.peers:
        parser.error("--peers must include mnn: the ratios printed are ours / theirs")
    time_all(args.models, args.repeat, args.peers)
    if args.own_process:
        time_own_process(args.models, args.repeat, args.peers)
    if not args.no_memory:
        memory_all(args.peers)


if __name__ == "__main__":
    main()
