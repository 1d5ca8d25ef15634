#!/usr/bin/env python3
"""Record drain's queue traces on CPython 3.13's real asyncio queues; check them on 3.13-3.15.

Runs every scenario of the step model (specs/traces/FORMAT.md) on asyncio.Queue,
asyncio.LifoQueue or asyncio.PriorityQueue and writes what happened after every step.
The Java TraceReplayTest replays the same scenarios against ShutdownQueue.

    PYENV_VERSION=3.13.0 python3.13 specs/traces/record.py            # re-record everything
    PYENV_VERSION=3.13.0 python3.13 specs/traces/record.py --check    # exit 1 if a scenario or file differs
    PYENV_VERSION=3.13.0 python3.13 specs/traces/record.py --scenario c3-in-transit-getter-loses-item-to-drain
    PYENV_VERSION=3.13.0 python3.13 specs/traces/record.py --list | --stats
    specs/traces/check-pyodide                                          # --check on CPython 3.14 and 3.15

CPython 3.13 is the reference: only it writes the recorded files. CPython 3.14 and 3.15 (in
pyodide, with --loop plain) run --check, --scenario, --list and --stats.
Standard library only. Output is deterministic: the same input gives byte-identical files.
"""

# Keep this check first and the rest of the file free of syntax newer than Python 3.6, so
# that an older interpreter reaches it and prints one clear line instead of a SyntaxError.
import sys

REFERENCE_VERSION = (3, 13)                      # records; the Java queue reproduces this one
CHECKED_VERSIONS = ((3, 13), (3, 14), (3, 15))   # may run --check against its recording

if sys.implementation.name != "cpython" or sys.version_info[:2] not in CHECKED_VERSIONS:
    sys.stderr.write(
        "record.py: needs CPython 3.13 (run it as: PYENV_VERSION=3.13.0 python3.13 "
        "specs/traces/record.py), or 3.14 or 3.15 to check, not %s %d.%d.%d\n"
        % ((sys.implementation.name,) + tuple(sys.version_info[:3])))
    sys.exit(2)

import argparse
import asyncio
import json
import os
import platform
import random

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
HANDWRITTEN_SOURCE = os.path.join(HERE, "scenarios", "handwritten.json")
RECORDED_DIR = os.path.join(HERE, "recorded")
RECORDED_HANDWRITTEN = os.path.join(RECORDED_DIR, "handwritten.json")
RECORDED_RANDOM = os.path.join(RECORDED_DIR, "random.json")

KINDS = {"fifo": asyncio.Queue, "lifo": asyncio.LifoQueue, "priority": asyncio.PriorityQueue}
TASK_OPS = ("put", "get", "put_nowait", "get_nowait", "task_done", "join", "shutdown",
            "qsize", "empty", "full")
BLOCKING_OPS = ("put", "get", "join")
BATCH_OPS = tuple(op for op in TASK_OPS if op not in BLOCKING_OPS)
MAX_TASKS = 10            # task numbers stay single-digit, so "blocked" keys sort numerically too
MAX_ITEM = 1000

# One step must reach quiescence within this many yields of the driver. Every yield lets at
# least one ready callback run and a scenario has at most MAX_TASKS tasks doing one call each,
# so a real step needs a handful; hitting the bound means a livelock or a recorder bug.
QUIESCENCE_BOUND = 1000
# Upper bound on the resume orders explored for one step (see explore()).
EXPLORE_BOUND = 20000

# The random corpus. Changing any of these changes random.json (the header records them).
RANDOM_SEED = 20250613
RANDOM_PER_KIND = 200
GENERATOR_VERSION = 1


class ScenarioError(Exception):
    """The scenario is not valid in the step model (FORMAT.md, "Validity")."""


class RecorderError(Exception):
    """Something that cannot happen did: a recorder bug or an unexpected runtime behaviour."""


# ----------------------------------------------------------------------------------------------
# The event loop
#
# The recorder needs a loop built on asyncio.BaseEventLoop: it reads the loop's ready queue
# (_ready) to find quiescence and reorders it to explore resume orders. asyncio.run's own loop is
# one (on Linux a selector loop, whose scheduling is all BaseEventLoop's). Pyodide's is not: its
# WebLoop hands every callback to JavaScript's event loop and has no ready queue, and pyodide
# cannot build a selector loop either (no socketpair for the self-pipe). --loop plain runs the
# standard library's BaseEventLoop itself with no I/O: the same _run_once, the same ready deque,
# the same Task and Future code, only the select() that a selector loop would do between two
# rounds of callbacks is replaced by a check that nothing would have to wait.


class _NoSelector:
    """The selector of PlainLoop: no file descriptors, and never a wait."""

    def select(self, timeout):
        # _run_once asks for timeout 0 while callbacks are ready; anything else means the loop
        # would wait (for a timer or forever), which no scenario and no recorder step may do.
        if timeout != 0:
            raise RecorderError("the plain loop would wait (timeout %r): nothing is runnable" % (timeout,))
        return []


class PlainLoop(asyncio.BaseEventLoop):
    """asyncio.BaseEventLoop with no I/O: the standard library's scheduling and nothing else."""

    def __init__(self):
        super().__init__()
        self._selector = _NoSelector()

    def _process_events(self, event_list):
        pass                       # _NoSelector reports no events

    def _write_to_self(self):
        pass                       # call_soon_threadsafe's wake-up: the loop never sleeps


LOOPS = {"default": None, "plain": PlainLoop}   # None: asyncio.run's own loop
loop_factory = None                              # set once by main(), from --loop, before any run


def run_on_loop(coro):
    return asyncio.run(coro, loop_factory=loop_factory)


def loop_name():
    return "plain loop" if loop_factory is PlainLoop else "default loop"


# ----------------------------------------------------------------------------------------------
# Static validation


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _check_keys(obj, required, optional, where):
    if not isinstance(obj, dict):
        raise ScenarioError("%s: expected an object, got %r" % (where, obj))
    missing = [k for k in required if k not in obj]
    extra = [k for k in obj if k not in required and k not in optional]
    if missing or extra:
        raise ScenarioError("%s: missing keys %s, unknown keys %s in %r" % (where, missing, extra, obj))


def _check_call(call, allowed_ops, where):
    """Validates an {"op": ...} object (invoke without "task", or batch action)."""
    op = call.get("op")
    if op not in allowed_ops:
        raise ScenarioError("%s: op %r is not allowed here (allowed: %s)" % (where, op, ", ".join(allowed_ops)))
    if op in ("put", "put_nowait"):
        item = call.get("item")
        if not _is_int(item) or not 0 <= item <= MAX_ITEM:
            raise ScenarioError("%s: %s needs a small non-negative integer item, got %r" % (where, op, item))
    elif "item" in call:
        raise ScenarioError("%s: %s takes no item" % (where, op))
    if op == "shutdown":
        if not isinstance(call.get("immediate"), bool):
            raise ScenarioError("%s: shutdown needs \"immediate\": true or false" % where)
    elif "immediate" in call:
        raise ScenarioError("%s: only shutdown takes \"immediate\"" % where)


def validate_step(step, tasks, where):
    """Checks the shape of one step; returns "invoke", "cancel" or "batch"."""
    if not isinstance(step, dict):
        raise ScenarioError("%s: a step is an object, got %r" % (where, step))
    if "batch" in step:
        _check_keys(step, ("batch",), (), where)
        actions = step["batch"]
        if not isinstance(actions, list) or not actions:
            raise ScenarioError("%s: a batch is a non-empty list of actions" % where)
        cancelled = set()
        for i, action in enumerate(actions):
            here = "%s action %d" % (where, i)
            if isinstance(action, dict) and "cancel" in action:
                _check_keys(action, ("cancel",), (), here)
                _check_task(action["cancel"], tasks, here)
                if action["cancel"] in cancelled:
                    raise ScenarioError("%s: task %d is cancelled twice in one batch" % (here, action["cancel"]))
                cancelled.add(action["cancel"])
            else:
                _check_keys(action, ("op",), ("item", "immediate"), here)
                _check_call(action, BATCH_OPS, here)
        return "batch"
    if "cancel" in step:
        _check_keys(step, ("cancel",), (), where)
        _check_task(step["cancel"], tasks, where)
        return "cancel"
    _check_keys(step, ("task", "op"), ("item", "immediate"), where)
    _check_task(step["task"], tasks, where)
    _check_call(step, TASK_OPS, where)
    return "invoke"


def _check_task(task, tasks, where):
    if not _is_int(task) or not 0 <= task < tasks:
        raise ScenarioError("%s: task number %r is not in 0..%d" % (where, task, tasks - 1))


def validate_scenario(scenario):
    name = scenario.get("name", "?") if isinstance(scenario, dict) else "?"
    optional = ("why", "covers")
    _check_keys(scenario, ("name", "kind", "maxsize", "tasks", "steps"), optional, "scenario %s" % name)
    if not isinstance(name, str) or not name:
        raise ScenarioError("scenario name must be a non-empty string: %r" % (name,))
    if scenario["kind"] not in KINDS:
        raise ScenarioError("scenario %s: kind must be one of %s" % (name, ", ".join(KINDS)))
    if not _is_int(scenario["maxsize"]):
        raise ScenarioError("scenario %s: maxsize must be an integer (<= 0 means unbounded)" % name)
    if not _is_int(scenario["tasks"]) or not 1 <= scenario["tasks"] <= MAX_TASKS:
        raise ScenarioError("scenario %s: tasks must be 1..%d" % (name, MAX_TASKS))
    if not isinstance(scenario["steps"], list) or not scenario["steps"]:
        raise ScenarioError("scenario %s: steps must be a non-empty list" % name)
    for i, step in enumerate(scenario["steps"]):
        validate_step(step, scenario["tasks"], "scenario %s step %d" % (name, i))


# ----------------------------------------------------------------------------------------------
# Running queue calls


def raised_name(exc):
    """The FORMAT.md name of an exception a queue call may legitimately raise."""
    if isinstance(exc, asyncio.QueueShutDown):
        return "QueueShutDown"
    if isinstance(exc, asyncio.QueueEmpty):
        return "QueueEmpty"
    if isinstance(exc, asyncio.QueueFull):
        return "QueueFull"
    if type(exc) is ValueError and str(exc) == "task_done() called too many times":
        return "TooManyTaskDone"
    raise RecorderError("unexpected exception from a queue call: %r" % (exc,))


def shutdown_immediate(q):
    """q.shutdown(immediate=True), returning the items the drain removed, in removal order.

    asyncio's shutdown returns None; the drain removes every item through the overridable
    _get hook, so an instance attribute shadowing the class's _get sees each one.
    """
    drained = []
    original = q._get

    def spy():
        item = original()
        drained.append(item)
        return item

    q._get = spy
    try:
        q.shutdown(immediate=True)
    finally:
        del q._get
    return drained


def call_now(q, call):
    """Runs a non-blocking queue method; returns the outcome fields of a completed entry."""
    op = call["op"]
    try:
        if op == "put_nowait":
            q.put_nowait(call["item"])
            value = None
        elif op == "get_nowait":
            value = q.get_nowait()
        elif op == "task_done":
            q.task_done()
            value = None
        elif op == "qsize":
            value = q.qsize()
        elif op == "empty":
            value = q.empty()
        elif op == "full":
            value = q.full()
        elif op == "shutdown":
            if call["immediate"]:
                return {"value": None, "drained": shutdown_immediate(q)}
            q.shutdown(immediate=False)
            value = None
        else:
            raise RecorderError("not a non-blocking op: %r" % (op,))
    except (asyncio.QueueShutDown, asyncio.QueueEmpty, asyncio.QueueFull, ValueError) as exc:
        return {"raises": raised_name(exc)}
    return {"value": value}


def items_in_get_order(q, kind):
    if kind == "fifo":
        return list(q._queue)              # deque, popleft order
    if kind == "lifo":
        return list(reversed(q._queue))    # list, pop() from the end
    return sorted(q._queue)                # heap; items are ints, so heappop order is sorted order


# ----------------------------------------------------------------------------------------------
# The step model on a real event loop


class Worker:
    """One scenario task: an asyncio.Task looping on its own private command channel.

    state: "idle" (awaiting its next command), "busy" (inside a queue call; at quiescence that
    means blocked in get/put/join) or "done" (finished; only after the session is closed).
    """

    def __init__(self, session, index):
        self.session = session
        self.index = index
        self.state = "starting"
        self.call = None
        self.command = None
        self.task = asyncio.get_running_loop().create_task(
            self._main(), name="%s/task%d" % (session.name, index))

    def send(self, call):
        if self.state != "idle":
            raise RecorderError("command sent to a task that is %s" % self.state)
        self.command.set_result(call)

    async def _main(self):
        try:
            await self._serve()
        except asyncio.CancelledError:
            if not self.session.closing:
                self.session.failures.append("task %d cancelled outside a queue call" % self.index)
        except BaseException as exc:  # a recorder bug: reported by the driver, never swallowed
            self.session.failures.append("task %d crashed: %r" % (self.index, exc))
        finally:
            self.state = "done"

    async def _serve(self):
        loop = asyncio.get_running_loop()
        q = self.session.q
        while True:
            self.command = loop.create_future()
            self.state = "idle"
            self.call = None
            call = await self.command          # a cancel here ends the task (session closing)
            self.state = "busy"
            self.call = call
            op = call["op"]
            entry = {"by": self.index, "op": op}
            try:
                if op == "get":
                    entry["value"] = await q.get()
                elif op == "put":
                    await q.put(call["item"])
                    entry["value"] = None
                elif op == "join":
                    await q.join()
                    entry["value"] = None
                else:
                    entry.update(call_now(q, call))
            except asyncio.CancelledError:
                if self.session.closing:
                    raise
                # The scenario cancelled this call: record it, forget the cancellation request
                # and go back to waiting for commands.
                self.task.uncancel()
                if self.task.cancelling():
                    raise RecorderError("task %d still has pending cancellations" % self.index)
                entry["raises"] = "Cancelled"
            except (asyncio.QueueShutDown, asyncio.QueueEmpty, asyncio.QueueFull, ValueError) as exc:
                entry["raises"] = raised_name(exc)
            self.session.completed.append(entry)


class StepInfo:
    """What the recorder learnt about a step beyond the recorded expectation."""

    def __init__(self):
        self.branching = False     # at some point two or more tasks were runnable at once
        self.decisions = []        # controlled runs: (choice, number of runnable callbacks)
        self.woke_then_acted = False
        self.wake_then_shutdown = False
        self.wake_then_cancel = False
        self.signature = None


class Session:
    """A queue and its scenario tasks inside the running event loop.

    Several sessions can share one loop (explore() replays prefixes in fresh sessions); only one
    is ever driven at a time, and the others are quiescent or closed, so "the loop has no ready
    callbacks" means "this session is quiescent".
    """

    def __init__(self, scenario):
        self.name = scenario["name"]
        self.kind = scenario["kind"]
        self.q = KINDS[self.kind](scenario["maxsize"])
        self.tasks = scenario["tasks"]
        self.completed = []
        self.failures = []
        self.closing = False
        self.loop = asyncio.get_running_loop()
        if not isinstance(self.loop, asyncio.BaseEventLoop):
            raise RecorderError("the running loop is a %s, not an asyncio.BaseEventLoop with a ready "
                                "queue: run with --loop plain" % type(self.loop).__name__)
        self.workers = [Worker(self, i) for i in range(self.tasks)]

    async def start(self):
        await self._quiesce_natural(StepInfo())
        if any(w.state != "idle" for w in self.workers):
            raise RecorderError("tasks did not start")

    async def close(self):
        self.closing = True
        for w in self.workers:
            w.task.cancel()
        await self._quiesce_natural(StepInfo())
        if not all(w.task.done() for w in self.workers):
            raise RecorderError("tasks did not finish on close")
        self._raise_failures()

    def _raise_failures(self):
        if self.failures:
            raise RecorderError("%s: %s" % (self.name, "; ".join(self.failures)))

    # -- one step ------------------------------------------------------------------------------

    async def apply(self, step, where, forced=None):
        """Performs one step and runs everything until quiescent.

        forced=None runs the loop as it is (Python's real FIFO resume order). A tuple runs it
        one callback at a time and resumes the forced[i]-th runnable callback at the i-th point
        where there is a choice (then the first): see explore().
        Returns (expected record, StepInfo).
        """
        kind = validate_step(step, self.tasks, where)
        info = StepInfo()
        self.completed = []
        if kind == "invoke":
            worker = self.workers[step["task"]]
            if worker.state != "idle":
                raise ScenarioError("%s: task %d is not idle (it is blocked in %s)"
                                    % (where, worker.index, worker.call["op"]))
            call = {k: v for k, v in step.items() if k != "task"}
            worker.send(call)
        elif kind == "cancel":
            worker = self.workers[step["cancel"]]
            if worker.state != "busy":
                raise ScenarioError("%s: task %d is not blocked in a queue call" % (where, worker.index))
            worker.task.cancel()
        else:
            self._run_batch(step["batch"], where, info)
        if forced is None:
            await self._quiesce_natural(info)
        else:
            await self._quiesce_controlled(forced, info)
        self._check_quiescent(where)
        by_task = {}
        driver = []
        for entry in self.completed:
            if entry["by"] == "driver":
                driver.append(entry)
            elif entry["by"] in by_task:
                raise RecorderError("%s: task %d completed two calls in one step" % (where, entry["by"]))
            else:
                by_task[entry["by"]] = entry
        completed = driver + [by_task[t] for t in sorted(by_task)]
        record = {"completed": completed, "state": self.state()}
        info.signature = json.dumps([record, self._hidden_state()], sort_keys=True)
        return record, info

    def _run_batch(self, actions, where, info):
        # Check the whole batch against the state at its start before doing anything, so an
        # invalid batch is never half-applied. Only tasks blocked at the start can be cancelled
        # (they are still inside their call while in transit); blocking ops never appear here.
        for i, action in enumerate(actions):
            if "cancel" in action and self.workers[action["cancel"]].state != "busy":
                raise ScenarioError("%s action %d: task %d is not blocked in a queue call"
                                    % (where, i, action["cancel"]))
        # The driver's actions run back to back, with no await in between: nothing else runs,
        # so a waiter woken by one action is still in transit during the next ones.
        woke = False
        for action in actions:
            if woke:
                info.woke_then_acted = True
                if "cancel" in action:
                    info.wake_then_cancel = True
                elif action["op"] == "shutdown":
                    info.wake_then_shutdown = True
            if "cancel" in action:
                self.workers[action["cancel"]].task.cancel()
            else:
                before = self._runnable()
                entry = {"by": "driver", "op": action["op"]}
                entry.update(call_now(self.q, action))
                self.completed.append(entry)
                if self._runnable() > before:
                    woke = True     # a queue action resumed a waiter: it is now in transit

    # -- quiescence ----------------------------------------------------------------------------
    #
    # The loop keeps the callbacks that are ready to run in loop._ready, a private deque of
    # Handles (base_events.BaseEventLoop). Every resumption of a task is such a callback: a
    # resolved or cancelled future schedules its task's wake-up with call_soon. The driver is a
    # task too; when it resumes after `await asyncio.sleep(0)` every callback that was ready
    # before its own has run, and _ready holds exactly what became ready since. So "_ready is
    # empty when the driver resumes" means no task can make progress: each one is idle (awaiting
    # its command future), parked on a queue future (blocked), or done. Nothing in a scenario
    # uses timers; _check_quiescent asserts that loop._scheduled is empty as well.

    def _runnable(self):
        return sum(1 for handle in self.loop._ready if not handle._cancelled)

    async def _quiesce_natural(self, info):
        for _ in range(QUIESCENCE_BOUND):
            runnable = self._runnable()
            if runnable == 0:
                return
            if runnable >= 2:
                # At some point two tasks could resume in either order. (Any moment with two
                # runnable tasks shows up at one of these checks: see explore().)
                info.branching = True
            await asyncio.sleep(0)
        raise RecorderError("%s: not quiescent after %d yields" % (self.name, QUIESCENCE_BOUND))

    async def _quiesce_controlled(self, forced, info):
        # Let exactly one ready callback run per yield: hide the others from the loop, then put
        # them back in front of whatever the chosen one made ready. Choosing index 0 each time
        # reproduces the loop's own FIFO order exactly.
        ready = self.loop._ready
        for _ in range(QUIESCENCE_BOUND):
            pending = [h for h in ready if not h._cancelled]
            if not pending:
                return
            choice = 0
            if len(pending) >= 2:
                info.branching = True
                depth = len(info.decisions)
                choice = forced[depth] if depth < len(forced) else 0
                if choice >= len(pending):
                    raise RecorderError("%s: replay diverged while exploring" % self.name)
                info.decisions.append((choice, len(pending)))
            chosen = pending.pop(choice)
            ready.clear()
            ready.append(chosen)
            await asyncio.sleep(0)
            fresh = list(ready)
            ready.clear()
            ready.extend(pending + fresh)
        raise RecorderError("%s: not quiescent after %d yields" % (self.name, QUIESCENCE_BOUND))

    def _check_quiescent(self, where):
        self._raise_failures()
        if self.loop._scheduled:
            raise RecorderError("%s: timers are scheduled" % where)
        q = self.q
        waiting = {"get": q._getters, "put": q._putters, "join": q._finished._waiters}
        counts = {"get": 0, "put": 0, "join": 0}
        for w in self.workers:
            if w.state == "idle":
                continue
            if w.state != "busy" or w.call["op"] not in BLOCKING_OPS:
                raise RecorderError("%s: task %d is %s in %r at quiescence" % (where, w.index, w.state, w.call))
            op = w.call["op"]
            counts[op] += 1
            fut = w.task._fut_waiter
            if fut is None or fut.done() or fut not in waiting[op]:
                raise RecorderError("%s: task %d is not parked in %s" % (where, w.index, op))
        if len(q._getters) != counts["get"] or len(q._putters) != counts["put"] \
                or len(q._finished._waiters) != counts["join"]:
            raise RecorderError("%s: waiter deques %d/%d/%d do not match blocked tasks %r"
                                % (where, len(q._getters), len(q._putters),
                                   len(q._finished._waiters), counts))
        if q._finished.is_set() != (q._unfinished_tasks == 0):
            raise RecorderError("%s: join event out of step with the unfinished count" % where)

    # -- observation ---------------------------------------------------------------------------

    def state(self):
        q = self.q
        blocked = {}
        for w in self.workers:
            if w.state == "busy":
                blocked[str(w.index)] = w.call["op"]
        return {
            "qsize": q.qsize(),
            "items": items_in_get_order(q, self.kind),
            "unfinished": q._unfinished_tasks,
            "shutdown": q._is_shutdown,
            "getters": len(q._getters),
            "putters": len(q._putters),
            "blocked": blocked,
            "repr": str(q),
        }

    def waiter_order(self, deque_):
        by_future = {id(w.task._fut_waiter): w.index for w in self.workers if w.state == "busy"}
        return [by_future.get(id(f), -1) for f in deque_]

    def _hidden_state(self):
        # What the recorded state does not show but later steps depend on: who is first in
        # line in each waiter deque, and the raw container (the heap layout is in repr too).
        q = self.q
        return {
            "getters": self.waiter_order(q._getters),
            "putters": self.waiter_order(q._putters),
            "joiners": self.waiter_order(q._finished._waiters),
            "raw": list(q._queue),
        }


# ----------------------------------------------------------------------------------------------
# Recording and resume-order sensitivity


async def replay(scenario, steps):
    """A fresh session with `steps` applied in Python's own order."""
    session = Session(scenario)
    await session.start()
    for i, step in enumerate(steps):
        await session.apply(step, "scenario %s step %d" % (scenario["name"], i))
    return session


async def explore(scenario, prefix, step, baseline, stop_at_first=True):
    """Does the outcome of `step` (after `prefix`) depend on the order in which tasks resume?

    Python resumes runnable tasks in FIFO order; Java threads woken together may run in any
    order. This replays prefix + step in fresh sessions once for every resume order (depth-first
    over the choice points of _quiesce_controlled) and compares the recorded outcome plus the
    waiter-deque order. Returns (sensitive, number of orders run).
    """
    where = "scenario %s step %d" % (scenario["name"], len(prefix))
    stack = [()]
    runs = 0
    sensitive = False
    while stack:
        forced = stack.pop()
        session = await replay(scenario, prefix)
        _, info = await session.apply(step, where, forced=forced)
        await session.close()
        runs += 1
        if not forced and info.signature != baseline:
            raise RecorderError("%s: one-at-a-time FIFO run differs from the loop's own run" % where)
        if info.signature != baseline:
            sensitive = True
            if stop_at_first:
                break
        choices = [c for c, _ in info.decisions]
        for depth in range(len(forced), len(info.decisions)):
            for alternative in range(1, info.decisions[depth][1]):
                stack.append(tuple(choices[:depth]) + (alternative,))
        if runs >= EXPLORE_BOUND:
            raise RecorderError("%s: more than %d resume orders to explore" % (where, EXPLORE_BOUND))
    return sensitive, runs


class Tally:
    """Corpus statistics (printed by --stats; quoted in README.md)."""

    FIELDS = ("scenarios", "steps", "invoke_steps", "cancel_steps", "batch_steps", "invoked_call_blocked",
              "steps_ending_with_blocked_task", "shutdowns", "immediate_shutdowns", "drains_removing_items",
              "cancels", "batches_waking_then_acting", "wake_then_shutdown", "wake_then_cancel",
              "QueueShutDown", "Cancelled", "QueueEmpty", "QueueFull", "TooManyTaskDone",
              "branching_steps", "order_sensitive_steps", "rejected_order_sensitive_candidates",
              "scenarios_with_several_shutdowns", "scenarios_with_mixed_shutdowns")

    def __init__(self):
        self.counts = dict.fromkeys(self.FIELDS, 0)
        self.kinds = {}

    def add(self, scenario, step, record, info):
        c = self.counts
        c["steps"] += 1
        if "batch" in step:
            c["batch_steps"] += 1
            actions = step["batch"]
        elif "cancel" in step:
            c["cancel_steps"] += 1
            actions = [step]
        else:
            c["invoke_steps"] += 1
            actions = [step]
            if str(step["task"]) in record["state"]["blocked"]:
                c["invoked_call_blocked"] += 1
        for action in actions:
            if "cancel" in action:
                c["cancels"] += 1
            elif action["op"] == "shutdown":
                c["shutdowns"] += 1
                c["immediate_shutdowns"] += action["immediate"]
        for entry in record["completed"]:
            if entry.get("drained"):
                c["drains_removing_items"] += 1
            if "raises" in entry:
                c[entry["raises"]] += 1
        if record["state"]["blocked"]:
            c["steps_ending_with_blocked_task"] += 1
        c["batches_waking_then_acting"] += info.woke_then_acted
        c["wake_then_shutdown"] += info.wake_then_shutdown
        c["wake_then_cancel"] += info.wake_then_cancel
        c["branching_steps"] += info.branching
        c["order_sensitive_steps"] += bool(record.get("order_sensitive"))

    def lines(self, title):
        width = max(len(f) for f in self.FIELDS)
        out = [title]
        for f in self.FIELDS:
            out.append("  %-*s %d" % (width, f, self.counts[f]))
        out.append("  %-*s %s" % (width, "by kind", ", ".join("%s %d" % kv for kv in sorted(self.kinds.items()))))
        return out


async def record_scenario(scenario, tally=None):
    """Runs one scenario; returns its list of expected step records."""
    validate_scenario(scenario)
    expected = []
    session = Session(scenario)
    await session.start()
    try:
        for i, step in enumerate(scenario["steps"]):
            record, info = await session.apply(step, "scenario %s step %d" % (scenario["name"], i))
            if info.branching:
                sensitive, _ = await explore(scenario, scenario["steps"][:i], step, info.signature)
                if sensitive:
                    record["order_sensitive"] = True
            expected.append(record)
            if tally is not None:
                tally.add(scenario, step, record, info)
    finally:
        await session.close()
    if tally is not None:
        kinds_of_shutdown = [a["immediate"] for step in scenario["steps"]
                             for a in (step["batch"] if "batch" in step else [step])
                             if a.get("op") == "shutdown"]
        tally.counts["scenarios_with_several_shutdowns"] += len(kinds_of_shutdown) >= 2
        tally.counts["scenarios_with_mixed_shutdowns"] += len(set(kinds_of_shutdown)) == 2
        tally.counts["scenarios"] += 1
        tally.kinds[scenario["kind"]] = tally.kinds.get(scenario["kind"], 0) + 1
    return expected


# ----------------------------------------------------------------------------------------------
# The hand-written corpus


def load_handwritten():
    """The hand-written scenarios, one per kind: an entry with "kinds" becomes one scenario per
    kind, named "<name>/<kind>"; an entry with "kind" keeps its name."""
    with open(HANDWRITTEN_SOURCE, encoding="utf-8") as f:
        source = json.load(f)
    scenarios = []
    names = set()
    for entry in source["scenarios"]:
        entry = dict(entry)
        for key in ("why", "covers"):
            if key not in entry:
                raise ScenarioError("hand-written scenario %s needs %r" % (entry.get("name"), key))
        if not isinstance(entry["covers"], list) or not entry["covers"]:
            raise ScenarioError("hand-written scenario %s: covers must be a non-empty list" % entry.get("name"))
        if ("kind" in entry) == ("kinds" in entry):
            raise ScenarioError("hand-written scenario %s needs exactly one of kind / kinds" % entry.get("name"))
        if "kinds" in entry:
            kinds = entry.pop("kinds")
            if not kinds or len(set(kinds)) != len(kinds):
                raise ScenarioError("hand-written scenario %s: bad kinds %r" % (entry["name"], kinds))
            expanded = [dict(entry, name="%s/%s" % (entry["name"], k), kind=k) for k in kinds]
        else:
            expanded = [entry]
        for scenario in expanded:
            validate_scenario(scenario)
            if scenario["name"] in names:
                raise ScenarioError("duplicate scenario name %s" % scenario["name"])
            names.add(scenario["name"])
            scenarios.append(scenario)
    return scenarios


# ----------------------------------------------------------------------------------------------
# The random corpus: generated step by step against the real queue


class Generator:
    """Seeded random scenarios that are valid by construction.

    Each scenario is built step by step on a live session, so the generator always knows which
    tasks are idle and which are blocked (and where each waiter is in line). Candidate steps
    whose outcome depends on the resume order of tasks woken together are rejected and
    re-drawn, so every step of the random corpus has one outcome under any resume order.
    """

    BATCH_ACTIONS = (("put_nowait", 25), ("get_nowait", 20), ("task_done", 14), ("qsize", 4),
                     ("empty", 3), ("full", 3), ("cancel", 15), ("shutdown", 3))

    def __init__(self, seed, tally):
        self.seed = seed
        self.tally = tally
        self.filling = False

    def _invoke_weights(self, session):
        # Favour calls that block. The generator drifts between filling and draining phases so
        # that blocked getters (empty queue) and blocked putters (full queue, small maxsize) both
        # pile up; join is likely while work is outstanding; calls that can only fail are rare.
        q = session.q
        closed = q._is_shutdown
        pending = q._unfinished_tasks
        filling = self.filling
        return (("get", 8 if closed else 12 if filling else 36),
                ("put", 3 if closed else 36 if filling else 12),
                ("join", 10 if pending else 1),
                ("task_done", 9 if pending > q.qsize() else 4 if pending else 1),
                ("get_nowait", 5), ("put_nowait", 1 if closed else 6),
                ("qsize", 1), ("empty", 1), ("full", 1), ("shutdown", 1))

    @staticmethod
    def _pick(rng, weighted):
        total = sum(w for _, w in weighted)
        r = rng.random() * total
        for value, w in weighted:
            r -= w
            if r < 0:
                return value
        return weighted[-1][0]

    async def scenario(self, kind, number):
        rng = random.Random("drain-traces-%d-%s-%d" % (self.seed, kind, number))
        scenario = {
            "name": "random-%s-%03d" % (kind, number),
            "kind": kind,
            "maxsize": self._pick(rng, ((0, 15), (1, 40), (2, 30), (3, 15))),
            "tasks": rng.randint(2, 5),
            "steps": [],
        }
        length = rng.randint(6, 25)
        # Shutdowns are planned for the second part of the scenario (so that tasks have had time
        # to block), each graceful or immediate; a due shutdown waits a little while nobody is
        # blocked, so most of them meet waiters and many of them catch one in transit.
        shutdowns = self._pick(rng, ((0, 10), (1, 55), (2, 25), (3, 10)))
        plan = sorted(rng.randint(length // 2, length - 1) for _ in range(shutdowns))
        plan = [[at, rng.random() < 0.5] for at in plan]
        self.filling = rng.random() < 0.5
        session = Session(scenario)
        await session.start()
        steps = scenario["steps"]
        while len(steps) < length:
            index = len(steps)
            if rng.random() < 0.2:
                self.filling = not self.filling
            where = "scenario %s step %d" % (scenario["name"], index)
            due = bool(plan) and plan[0][0] <= index
            if due and index < length - 1 and not session.q._getters and not session.q._putters \
                    and not session.q._finished._waiters and rng.random() < 0.8:
                due = False
            for attempt in range(50):
                if due and attempt < 25:
                    step = self._shutdown_step(rng, session, plan[0][1])
                else:
                    step = self._step(rng, session)
                _, info = await session.apply(step, where)
                if info.branching:
                    sensitive, _ = await explore(scenario, steps, step, info.signature)
                    if sensitive:
                        self.tally.counts["rejected_order_sensitive_candidates"] += 1
                        await session.close()
                        session = await replay(scenario, steps)
                        continue
                steps.append(step)
                if due and attempt < 25:
                    plan.pop(0)
                break
            else:
                raise RecorderError("%s: no order-insensitive step found" % where)
        await session.close()
        validate_scenario(scenario)
        return scenario

    # -- candidate steps -----------------------------------------------------------------------

    def _view(self, session):
        idle = [w.index for w in session.workers if w.state == "idle"]
        blocked = {w.index: w.call["op"] for w in session.workers if w.state == "busy"}
        return idle, blocked

    def _item(self, rng):
        return rng.randint(0, 9)

    def _invoke(self, rng, task, op):
        step = {"task": task, "op": op}
        if op in ("put", "put_nowait"):
            step["item"] = self._item(rng)
        if op == "shutdown":
            step["immediate"] = rng.random() < 0.5
        return step

    def _wake_action(self, rng, session):
        """A batch action that wakes a blocked waiter, if any is blocked."""
        q = session.q
        options = []
        if q._getters:
            options.append({"op": "put_nowait", "item": self._item(rng)})
        if q._putters:
            options.append({"op": "get_nowait"})
        if q._finished._waiters and q._unfinished_tasks > 0:
            options.append({"op": "task_done"})
        return rng.choice(options) if options else None

    def _cancel_target(self, rng, session, blocked, exclude=()):
        candidates = [t for t in sorted(blocked) if t not in exclude]
        if not candidates:
            return None
        # Prefer the first waiter in line: that is the one a wake-up just put in transit.
        firsts = [order[0] for order in (session.waiter_order(session.q._getters),
                                         session.waiter_order(session.q._putters)) if order]
        firsts = [t for t in firsts if t in candidates]
        if firsts and rng.random() < 0.6:
            return rng.choice(firsts)
        return rng.choice(candidates)

    def _shutdown_step(self, rng, session, immediate):
        idle, blocked = self._view(session)
        if idle and rng.random() < (0.15 if blocked else 0.4):
            return {"task": rng.choice(idle), "op": "shutdown", "immediate": immediate}
        actions = []
        wake = self._wake_action(rng, session)
        if wake is not None and rng.random() < 0.85:
            actions.append(wake)
        actions.append({"op": "shutdown", "immediate": immediate})
        r = rng.random()
        if r < 0.3 and blocked:
            actions.append({"cancel": self._cancel_target(rng, session, blocked)})
        elif r < 0.45:
            actions.append({"op": rng.choice(("get_nowait", "put_nowait", "task_done", "qsize"))})
            if actions[-1]["op"] == "put_nowait":
                actions[-1]["item"] = self._item(rng)
        return {"batch": actions}

    def _step(self, rng, session):
        idle, blocked = self._view(session)
        shapes = [("batch", 28 if blocked else 12)]
        if idle:
            shapes.append(("invoke", 60))
        if blocked:
            shapes.append(("cancel", 10))
        shape = self._pick(rng, shapes)
        if shape == "invoke":
            return self._invoke(rng, rng.choice(idle), self._pick(rng, self._invoke_weights(session)))
        if shape == "cancel":
            return {"cancel": rng.choice(sorted(blocked))}
        return {"batch": self._batch(rng, session, blocked)}

    def _batch(self, rng, session, blocked):
        wake = self._wake_action(rng, session)
        pattern = self._pick(rng, (("wake-cancel", 25 if wake and blocked else 0),
                                   ("barge", 15 if wake else 0),
                                   ("join-recheck", 6 if session.q._finished._waiters else 0),
                                   ("random", 54)))
        if pattern == "wake-cancel":
            return [wake, {"cancel": self._cancel_target(rng, session, blocked)}]
        if pattern == "barge":
            other = ({"op": "get_nowait"} if wake["op"] == "put_nowait"
                     else {"op": "put_nowait", "item": self._item(rng)})
            return [wake, other]
        if pattern == "join-recheck":
            return [{"op": "get_nowait"}, {"op": "task_done"}, {"op": "put_nowait", "item": self._item(rng)}]
        actions = []
        cancelled = set()
        for _ in range(rng.randint(1, 4)):
            op = self._pick(rng, self.BATCH_ACTIONS)
            if op == "cancel":
                target = self._cancel_target(rng, session, blocked, exclude=cancelled)
                if target is None:
                    continue
                cancelled.add(target)
                actions.append({"cancel": target})
            elif op == "shutdown":
                actions.append({"op": "shutdown", "immediate": rng.random() < 0.5})
            elif op == "put_nowait":
                actions.append({"op": "put_nowait", "item": self._item(rng)})
            else:
                actions.append({"op": op})
        return actions or [{"op": "qsize"}]


async def generate_random(seed, per_kind, tally):
    generator = Generator(seed, tally)
    scenarios = []
    for kind in KINDS:
        for number in range(per_kind):
            scenarios.append(await generator.scenario(kind, number))
    return scenarios


# ----------------------------------------------------------------------------------------------
# Files


def dumps(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def corpus_text(header, scenarios):
    """One JSON document: the header, then one scenario per line (diff-friendly)."""
    lines = ",\n".join(dumps(s) for s in scenarios)
    return '{"header":%s,\n"scenarios":[\n%s\n]}\n' % (dumps(header), lines)


def random_header(count):
    return {
        "corpus": "random",
        "generator": GENERATOR_VERSION,
        "seed": RANDOM_SEED,
        "per_kind": RANDOM_PER_KIND,
        "count": count,
        "scenario_seed": "random.Random('drain-traces-<seed>-<kind>-<number>')",
        "recorded_with": "CPython 3.13 asyncio",
        "record": "PYENV_VERSION=3.13.0 python3.13 specs/traces/record.py",
    }


def handwritten_header(count):
    return {
        "corpus": "handwritten",
        "source": "specs/traces/scenarios/handwritten.json",
        "count": count,
        "recorded_with": "CPython 3.13 asyncio",
        "record": "PYENV_VERSION=3.13.0 python3.13 specs/traces/record.py",
    }


async def build_all(hand_tally, random_tally):
    handwritten = load_handwritten()
    for scenario in handwritten:
        scenario["expected"] = await record_scenario(scenario, hand_tally)
    generated = await generate_random(RANDOM_SEED, RANDOM_PER_KIND, random_tally)
    for scenario in generated:
        scenario["expected"] = await record_scenario(scenario, random_tally)
        if any(r.get("order_sensitive") for r in scenario["expected"]):
            raise RecorderError("%s: the generator let an order-sensitive step through" % scenario["name"])
    return {
        RECORDED_HANDWRITTEN: corpus_text(handwritten_header(len(handwritten)), handwritten),
        RECORDED_RANDOM: corpus_text(random_header(len(generated)), generated),
    }


def load_recorded(path):
    """The scenarios of a committed recorded file, each with its "expected"."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)["scenarios"]


def step_difference(recorded, here):
    """How two records of one step differ, field by field (state fields one by one)."""
    parts = []
    for key in sorted(set(recorded) | set(here)):
        a, b = recorded.get(key), here.get(key)
        if key == "state" and isinstance(a, dict) and isinstance(b, dict):
            parts.extend("state.%s recorded %s, here %s" % (field, dumps(a.get(field)), dumps(b.get(field)))
                         for field in sorted(set(a) | set(b)) if a.get(field) != b.get(field))
        elif a != b:
            parts.append("%s recorded %s, here %s" % (key, dumps(a), dumps(b)))
    return "; ".join(parts)


async def compare_recorded():
    """Re-runs every committed scenario, as committed, and compares each step with its recorded
    expectation. Returns (scenarios run, one line per scenario that differs: its name, its first
    differing step and how, and how many steps differ)."""
    count = 0
    differences = []
    for path in (RECORDED_HANDWRITTEN, RECORDED_RANDOM):
        for recorded in load_recorded(path):
            scenario = {k: v for k, v in recorded.items() if k != "expected"}
            here = await record_scenario(scenario)
            count += 1
            differing = [i for i, (a, b) in enumerate(zip(recorded["expected"], here)) if a != b]
            if len(recorded["expected"]) != len(here):
                differences.append("%s: %d steps recorded for %d steps"
                                   % (scenario["name"], len(recorded["expected"]), len(here)))
            elif differing:
                first = differing[0]
                later = " (and %d later steps)" % (len(differing) - 1) if len(differing) > 1 else ""
                differences.append("%s step %d, %s%s: %s" % (
                    scenario["name"], first, describe_step(scenario["steps"][first]), later,
                    step_difference(recorded["expected"][first], here[first])))
    return count, differences


def check():
    """--check: (1) every committed scenario replays here exactly as recorded, and (2) recording
    here from the sources gives the committed files byte for byte (on 3.13 this catches a
    scenario or generator change that was not re-recorded)."""
    runtime = "CPython %s, %s" % (platform.python_version(), loop_name())
    rerecord = "re-record with: PYENV_VERSION=3.13.0 python3.13 specs/traces/record.py"
    reference = sys.version_info[:2] == REFERENCE_VERSION
    count, differences = run_on_loop(compare_recorded())
    if differences:
        print("%d of %d recorded scenarios differ on %s:" % (len(differences), count, runtime))
        for line in differences:
            print("  " + line)
        if reference:
            print("if the change is intended, " + rerecord)
        return 1
    hand_tally, random_tally = Tally(), Tally()
    files = run_on_loop(build_all(hand_tally, random_tally))
    stale = []
    for path, text in sorted(files.items()):
        try:
            with open(path, encoding="utf-8", newline="") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            stale.append(os.path.relpath(path, REPO))
    if stale:
        print("traces are stale on %s (%s): every recorded scenario replays as recorded, but recording "
              "from the sources gives other files; %s" % (runtime, ", ".join(stale), rerecord if reference else
              "if --check passes on CPython 3.13, recording itself differs here"))
        return 1
    print("traces up to date on %s: %d recorded scenarios replay as recorded, and re-recording %d "
          "hand-written + %d random scenarios (%d steps) gives the committed files"
          % (runtime, count, hand_tally.counts["scenarios"], random_tally.counts["scenarios"],
             hand_tally.counts["steps"] + random_tally.counts["steps"]))
    return 0


def find_scenario(name):
    """Input scenarios whose name is `name` or `name/<kind>`, from the hand-written source and
    the recorded random corpus."""
    found = [s for s in load_handwritten() if s["name"] == name or s["name"].rsplit("/", 1)[0] == name]
    if not found and os.path.exists(RECORDED_RANDOM):
        for s in load_recorded(RECORDED_RANDOM):
            if s["name"] == name:
                s = dict(s)
                s.pop("expected", None)
                found.append(s)
    return found


def describe_call(call):
    text = call["op"]
    if "item" in call:
        text += "(%d)" % call["item"]
    if "immediate" in call:
        text += "(immediate)" if call["immediate"] else "()"
    return text


def describe_step(step):
    if "batch" in step:
        return "driver batch: " + "; ".join(
            "cancel task %d" % a["cancel"] if "cancel" in a else describe_call(a) for a in step["batch"])
    if "cancel" in step:
        return "cancel task %d" % step["cancel"]
    return "task %d: %s" % (step["task"], describe_call(step))


def describe_entry(entry):
    who = "driver" if entry["by"] == "driver" else "task %d" % entry["by"]
    text = "%s %s" % (who, entry["op"])
    if "raises" in entry:
        text += " raises %s" % entry["raises"]
    else:
        text += " -> %s" % json.dumps(entry["value"])
    if "drained" in entry:
        text += ", drained %s" % json.dumps(entry["drained"])
    return text


def print_trace(scenario, expected):
    print("%s  (%s, maxsize %d, %d tasks)" % (scenario["name"], scenario["kind"], scenario["maxsize"],
                                               scenario["tasks"]))
    if scenario.get("why"):
        print("  why: %s" % scenario["why"])
    if scenario.get("covers"):
        print("  covers: %s" % ", ".join(scenario["covers"]))
    for i, (step, record) in enumerate(zip(scenario["steps"], expected)):
        state = record["state"]
        print("  step %d  %s%s" % (i, describe_step(step),
                                   "   [ORDER-SENSITIVE]" if record.get("order_sensitive") else ""))
        for entry in record["completed"]:
            print("      %s" % describe_entry(entry))
        blocked = ", ".join("task %s in %s" % kv for kv in sorted(state["blocked"].items())) or "none"
        print("      state: items %s, unfinished %d, shutdown %s, getters %d, putters %d, blocked: %s"
              % (json.dumps(state["items"]), state["unfinished"], json.dumps(state["shutdown"]),
                 state["getters"], state["putters"], blocked))
        print("      repr:  %s" % state["repr"])


def main(argv):
    global loop_factory
    parser = argparse.ArgumentParser(description="Record drain's queue traces on CPython 3.13 asyncio; "
                                                 "check them on 3.13, 3.14 and 3.15.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true",
                       help="re-run every recorded scenario and re-record in memory; exit 1 if anything differs")
    group.add_argument("--scenario", metavar="NAME", help="print one scenario's trace (all kinds for a base name)")
    group.add_argument("--list", action="store_true", help="list the scenario names")
    group.add_argument("--stats", action="store_true", help="re-record in memory and print corpus statistics")
    parser.add_argument("--loop", choices=sorted(LOOPS), default="default",
                        help="default: asyncio.run's own loop; plain: asyncio.BaseEventLoop with no I/O (pyodide)")
    args = parser.parse_args(argv)
    loop_factory = LOOPS[args.loop]

    if args.loop == "default" and sys.platform == "emscripten":
        sys.stderr.write("record.py: pyodide's own loop (WebLoop) has no ready queue: add --loop plain\n")
        return 2
    recording = not (args.check or args.scenario or args.list or args.stats)
    if recording and (sys.version_info[:2] != REFERENCE_VERSION or args.loop != "default"):
        sys.stderr.write("record.py: only CPython 3.13 on its default loop records (the reference the Java "
                         "queue reproduces); here, use --check\n")
        return 2

    try:
        return run(args)
    except ScenarioError as exc:
        sys.stderr.write("record.py: invalid scenario: %s\n" % exc)
        return 1


def run(args):
    if args.list:
        for s in load_handwritten():
            print(s["name"])
        if os.path.exists(RECORDED_RANDOM):
            for s in load_recorded(RECORDED_RANDOM):
                print(s["name"])
        return 0

    if args.check:
        return check()

    if args.scenario:
        found = find_scenario(args.scenario)
        if not found:
            sys.stderr.write("record.py: no scenario named %s (see --list)\n" % args.scenario)
            return 1
        for scenario in found:
            print_trace(scenario, run_on_loop(record_scenario(scenario)))
        return 0

    hand_tally, random_tally = Tally(), Tally()
    files = run_on_loop(build_all(hand_tally, random_tally))
    steps = hand_tally.counts["steps"] + random_tally.counts["steps"]
    summary = "%d hand-written + %d random scenarios, %d steps" % (
        hand_tally.counts["scenarios"], random_tally.counts["scenarios"], steps)

    if args.stats:
        print("\n".join(hand_tally.lines("hand-written corpus:")))
        print("\n".join(random_tally.lines("random corpus (seed %d):" % RANDOM_SEED)))
        return 0

    os.makedirs(RECORDED_DIR, exist_ok=True)
    for path, text in sorted(files.items()):
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    print("recorded %s into %s" % (summary, os.path.relpath(RECORDED_DIR, REPO)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
