#!/usr/bin/env python3
"""What CPython 3.13's heapq and asyncio.PriorityQueue leave behind when a comparison raises.

SQ-20 and ComparatorFaultTest cite this probe: run it on CPython 3.13 and compare its output with
the expectations in src/test/java/dev/drain/queue/ComparatorFaultTest.java.

    PYENV_VERSION=3.13.0 python3.13 specs/probes/comparator_faults.py

Each line is: the operation, how many comparisons succeed before one raises, the heap's list
afterwards, and what the operation returned (BOMB when it raised).
"""
import asyncio
import heapq


class Bomb(Exception):
    """What the comparison raises."""


class Key:
    """An int that counts down a budget of comparisons and raises Bomb when it is spent."""
    budget = None

    def __init__(self, value):
        self.value = value

    def __lt__(self, other):
        if Key.budget is not None:
            if Key.budget == 0:
                raise Bomb()
            Key.budget -= 1
        return self.value < other.value


def heap_of(values):
    Key.budget = None
    heap = []
    for value in values:
        heapq.heappush(heap, Key(value))
    return heap


def probe(values, push, budget):
    heap = heap_of(values)
    Key.budget = budget
    result = None
    try:
        if push is None:
            result = heapq.heappop(heap).value
        else:
            heapq.heappush(heap, Key(push))
    except Bomb:
        result = "BOMB"
    Key.budget = None
    return [key.value for key in heap], result


def main():
    for budget in range(4):
        print("push 1 into [5, 7, 9, 8, 10, 12]", budget, *probe([5, 7, 9, 8, 10, 12], 1, budget))
    for budget in range(6):
        print("pop from [1, 5, 3, 8, 6, 4, 7, 9]", budget, *probe([1, 5, 3, 8, 6, 4, 7, 9], None, budget))

    async def queue_level():
        for name, values, budget, action in [
            ("put_nowait(1)", [5, 7, 9], 0, lambda q: q.put_nowait(Key(1))),
            ("get_nowait()", [1, 5, 3, 8], 0, lambda q: q.get_nowait()),
            ("shutdown(immediate=True)", [1, 5, 3, 8, 6], 1, lambda q: q.shutdown(immediate=True)),
        ]:
            q = asyncio.PriorityQueue()
            Key.budget = None
            for value in values:
                q.put_nowait(Key(value))
            Key.budget = budget
            try:
                action(q)
                outcome = "returned"
            except Bomb:
                outcome = "raised"
            Key.budget = None
            print(name, "on", values, "budget", budget, outcome, "queue", [k.value for k in q._queue],
                  "qsize", q.qsize(), "unfinished", q._unfinished_tasks)

    asyncio.run(queue_level())


if __name__ == "__main__":
    main()
