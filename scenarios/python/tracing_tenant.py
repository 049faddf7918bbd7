"""The Python langsmith client with a control-plane key (LANGSMITH_API_KEY=jgk_...): its traces go
to that key's tenant, which it reads back; the default tenant (any other key) does not see them,
and a key of jetgraph's form that it does not know is refused. Run by TestPythonTracing
("tenant"); argv[1] is an unknown jgk_ key.
"""

from __future__ import annotations

import sys
import uuid

from langsmith import Client, traceable
from langsmith.utils import LangSmithError, LangSmithNotFoundError

import checks
from checks import check, note_run, poll

checks.label = "tenant"
PROJECT = f"py-tenant-{uuid.uuid4().hex[:8]}"


def main() -> None:
    errors: list[Exception] = []
    client = Client(tracing_error_callback=errors.append)
    ids: dict[str, str] = {}

    @traceable(name="tenant-chain", client=client, project_name=PROJECT)
    def chain(x: int) -> int:
        note_run(ids, "chain")
        return x * 2

    check(chain(21) == 42, "traced function")
    client.flush()
    check(not errors, f"tracing errors: {errors}")
    run = poll("the tenant's run", lambda: (r := client.read_run(ids["chain"])).end_time and r)
    check(run.outputs == {"output": 42}, f"outputs: {run.outputs}")
    check([p.name for p in client.list_projects(name=PROJECT)] == [PROJECT], "the tenant's project")

    other = Client(api_key="anything")
    try:
        other.read_run(ids["chain"])
        check(False, "the default tenant read another tenant's run")
    except LangSmithNotFoundError:
        pass
    check(not list(other.list_projects(name=PROJECT)), "the default tenant lists another tenant's project")

    unknown = Client(api_key=sys.argv[1])
    try:
        unknown.read_run(ids["chain"])
        check(False, "an unknown jgk_ key read a run")
    except LangSmithError as e:
        check("401" in str(e) or "Authentication" in type(e).__name__, f"unknown key: {e!r}")
    print("ok")


main()
