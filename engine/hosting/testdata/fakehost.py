"""A host that speaks the protocol without LangGraph, for the supervisor's tests.

A run's input says what to do: {"crash": true} exits at once, {"crash_once": path} exits
unless the file exists (and makes it), {"sleep": true} waits for its
cancel; otherwise it puts a checkpoint, reads it back, puts a write, emits one event and answers
with what it read.
"""
import json
import os
import sys
import threading

protocol = int(sys.argv[1]) if len(sys.argv) > 1 else 1
out = sys.stdout
lock = threading.Lock()
replies = {}
waiting = {}
cancelled = {}


def send(frame):
    with lock:
        out.write(json.dumps(frame) + "\n")
        out.flush()


def call(req, method, params):
    cid = "c" + req + method
    ev = threading.Event()
    waiting[cid] = ev
    send({"t": "call", "id": cid, "req": req, "method": method, "params": params})
    ev.wait()
    return replies.pop(cid)


def run(frame):
    rid, inp = frame["id"], frame.get("input") or {}
    marker = inp.get("crash_once")
    if marker and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(9)
    if inp.get("crash"):
        print("crashing as asked", file=sys.stderr, flush=True)
        os._exit(7)
    if inp.get("sleep"):
        ev = threading.Event()
        cancelled[rid] = ev
        ev.wait()
        send({"t": "done", "id": rid, "result": {"cancelled": True}})
        return
    ref = {"thread_id": frame["thread_id"], "checkpoint_ns": "", "checkpoint_id": "cp1"}
    cp = {"v": 1, "id": "cp1", "ts": "2026-01-02T03:04:05+00:00", "channel_values": {"x": inp.get("x")},
          "channel_versions": {"x": 1}, "versions_seen": {}}
    call(rid, "checkpoint.put", {"ref": ref, "checkpoint": cp, "metadata": {"step": 0, "source": "loop"}, "parent": None})
    call(rid, "checkpoint.put_writes", {"ref": ref, "writes": [{"task_id": "t1", "channel": "x", "value": 2}]})
    got = call(rid, "checkpoint.get", {"ref": dict(ref, checkpoint_id="")})
    send({"t": "event", "id": rid, "mode": "custom", "ns": [], "data": {"hello": inp.get("x")}})
    send({"t": "done", "id": rid, "result": {"values": {"read": got["result"]}, "interrupts": [], "interrupted": False}})


def main():
    print("fake host starting", file=sys.stderr, flush=True)
    send({"t": "hello", "protocol": protocol, "language": "python", "runtime": "test", "library": "none",
          "graphs": {"g": {"ok": True, "factory": False}, "bad": {"ok": False, "error": "AttributeError: no graph"}}})
    for line in sys.stdin:
        frame = json.loads(line)
        if frame["t"] == "reply":
            replies[frame["id"]] = frame
            waiting.pop(frame["id"]).set()
        elif frame["t"] == "cancel":
            cancelled[frame["id"]].set()
        elif frame["t"] == "run":
            threading.Thread(target=run, args=(frame,), daemon=True).start()


main()
