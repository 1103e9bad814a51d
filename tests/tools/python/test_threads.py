"""Estimates from several Python threads: the same results as one after another, and the GIL released
while simulating."""

import threading
from concurrent.futures import ThreadPoolExecutor

import trainsim
from conftest import EXAMPLES
from trainsim import _core
from trainsim._scenario_text import source_of

PATH = EXAMPLES / "llama3-8b-64-h100.yaml"
# 16 distinct estimates: node counts and micro-batches, both fidelities; presets loaded from every thread.
POINTS = [({"cluster.nodes": n, "parallelism.micro_batch": mb}, fidelity)
          for n in (2, 4, 8, 16) for mb in (1, 2) for fidelity in ("analytic", "event")]


def estimate(point):
    sets, fidelity = point
    try:
        return trainsim.run(PATH, set=sets, fidelity=fidelity)
    except trainsim.InfeasibleError as e:
        return e.result


def test_thread_pool_of_4_equals_serial_loop():
    # The pool runs first, in a fresh process (ctest runs each test file in its own); each call reads its
    # presets into a library of its own (scenarios/presets.hpp), side by side with the other threads.
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = list(pool.map(estimate, POINTS))
    serial = [estimate(p) for p in POINTS]
    assert len({r["iteration_time_s"] for r in serial}) > 4  # the points differ
    assert first == serial
    for _ in range(2):
        with ThreadPoolExecutor(max_workers=4) as pool:
            assert list(pool.map(estimate, POINTS)) == serial


def test_gil_is_released_while_simulating():
    # A Python thread counts while the main thread is inside one event simulation of a 1,024-GPU step
    # (about a second): holding the GIL, the counter could not move during the call.
    path = EXAMPLES / "gpt3-175b-1024-a100.yaml"
    source = source_of(str(path))
    count = 0
    stop = threading.Event()

    def counter():
        nonlocal count
        while not stop.is_set():
            count += 1

    thread = threading.Thread(target=counter)
    thread.start()
    try:
        before = count
        _core.run(source, [], "event", False)
        during = count - before
    finally:
        stop.set()
        thread.join()
    assert during > 10_000
