# what a user of the Python langsmith client does with the README recipe, plus the
# reads the client offers (v1 and v2) and feedback. Waits for the server through DIRECT (not
# recorded), so the recording holds only the client's own requests.
import asyncio, datetime, os, sys, time, warnings
import requests
from langsmith import Client, traceable
from langsmith.run_helpers import get_current_run_tree

warnings.simplefilter("ignore")
project = os.environ["PROJECT"]
direct = os.environ["DIRECT"]
client = Client()
ids = {}

@traceable(run_type="llm", name="chat_model", metadata={"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"})
def chat(messages):
    ids["llm"] = str(get_current_run_tree().id)
    return {"choices": [{"message": {"role": "assistant", "content": "Paris."}}],
            "usage_metadata": {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}}

@traceable(run_type="tool", name="lookup", tags=["geo"])
def lookup(q):
    ids["tool"] = str(get_current_run_tree().id)
    return {"result": q.upper()}

@traceable(name="pipeline", project_name=project, metadata={"thread_id": "conversation-1"})
def pipeline(question):
    ids["root"] = str(get_current_run_tree().id)
    lookup(question)
    return chat([{"role": "user", "content": question}])

pipeline("What is the capital of France?", langsmith_extra={"client": client})
client.flush()

def wait(url, ok):
    for _ in range(200):
        r = requests.get(url)
        if r.status_code == 200 and ok(r.json()):
            return r.json()
        time.sleep(0.05)
    sys.exit("timed out waiting for " + url)

for k in ("root", "tool", "llm"):
    wait(f"{direct}/tracing/runs/{ids[k]}", lambda r: r.get("end_time"))
wait(f"{direct}/tracing/runs/{ids['root']}", lambda r: r.get("total_tokens") == 15)

runs = list(client.list_runs(project_name=project, select=["inputs", "outputs"]))
assert sorted(r.name for r in runs) == ["chat_model", "lookup", "pipeline"], runs
assert all(r.inputs for r in runs), runs
roots = list(client.list_runs(project_name=project, is_root=True))
assert [r.id for r in roots] == [runs[0].trace_id], roots
root = client.read_run(ids["root"])
assert root.total_tokens == 15 and root.status == "success", root
fb = client.create_feedback(root.id, key="correctness", score=1.0, comment="right", trace_id=root.trace_id)
client.flush()
print("feedback (multipart):", fb.id)

async def v2():
    p = client.read_project(project_name=project)
    items = [r async for r in client.runs.query(
        project_ids=[str(p.id)], selects=["ID", "NAME", "RUN_TYPE", "STATUS", "START_TIME", "TRACE_ID", "PARENT_RUN_IDS", "INPUTS", "OUTPUTS", "TOTAL_TOKENS"],
        min_start_time=datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc), page_size=2)]
    assert sorted(r.name for r in items) == ["chat_model", "lookup", "pipeline"], items
    one = await client.runs.retrieve(ids["llm"], project_id=str(p.id), selects=["NAME", "TOTAL_TOKENS", "PARENT_RUN_IDS"])
    assert one.total_tokens == 15 and str(one.parent_run_ids[0]) == ids["root"], one
    since = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    traces = [t async for t in client.traces.query(project_id=str(p.id), selects=["NAME", "STATUS"], min_start_time=since)]
    assert [(t.root_run.name, t.trace_aggregates.total_tokens) for t in traces] == [("pipeline", 15)], traces
    trace_runs = await client.traces.list_runs(ids["root"], project_id=str(p.id), selects=["ID", "RUN_TYPE"], min_start_time=since)
    assert [r.run_type for r in trace_runs.items] == ["CHAIN", "TOOL", "LLM"], trace_runs
    threads = [t async for t in client.threads.query(project_id=str(p.id), min_start_time=since)]
    assert [(t.thread_id, t.count) for t in threads] == [("conversation-1", 1)], threads
    turns = [t async for t in client.threads.list_traces("conversation-1", project_id=str(p.id), selects=["TURN_NUMBER", "NAME"])]
    assert [(t.turn_number, t.name, str(t.trace_id)) for t in turns] == [(1, "pipeline", ids["root"])], turns
    return items
items = asyncio.run(v2())
print("v2:", [(r.name, r.run_type) for r in items])

if os.environ.get("FEEDBACK_ENDPOINT"):
    try:
        fb2 = client.create_feedback(root.id, key="helpfulness", score=0.5, stop_after_attempt=1)
        print("feedback (POST /feedback):", fb2.id)
        print("read_feedback:", client.read_feedback(fb2.id))
    except Exception as e:
        print("feedback endpoint:", type(e).__name__, str(e)[:200])
print("ids:", ids)
