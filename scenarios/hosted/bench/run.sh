#!/usr/bin/env bash
# The hosted-graph benchmark: the same small graph (src/echo.ts, echo.py) served by jetgraph
# (as it starts by default, tracing every run, and with --no-self-trace, tracing none as the
# references do) and by the reference dev servers, and the Go echo beside them, measured side by
# side by `jetgraph bench compare` (README, Performance). Arguments go to `jetgraph bench compare`
# (-n 400 -c 16 unless given). Run from anywhere: `task bench:hosted -- -n 400`.
#
#   JETGRAPH_BENCH_DIR  work folder: binary, logs, data (default ~/.cache/jetgraph/bench)
#   JETGRAPH_BENCH_PYREF  a virtual environment with langgraph-cli[inmem] (the Python reference
#                       and the Python jetgraph's host uses); made there if missing
#   JETGRAPH_BENCH_PORT  first of the seven ports (default 18123: jetgraph, +1 JS, +2 Python,
#                       +3 jetgraph --no-self-trace, +4 the traced references' trace sink, +5 JS
#                       traced, +6 Python traced)
#   JETGRAPH_BENCH_SERVE_FLAGS  more flags of `jetgraph serve` (--pprof, --hosts 2, ...)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=${JETGRAPH_BENCH_DIR:-$HOME/.cache/jetgraph/bench}
pyref=${JETGRAPH_BENCH_PYREF:-$work/pyref}
port=${JETGRAPH_BENCH_PORT:-18123}
jg_port=$port js_port=$((port + 1)) py_port=$((port + 2)) nt_port=$((port + 3))
sink_port=$((port + 4)) jst_port=$((port + 5)) pyt_port=$((port + 6))
mkdir -p "$work"

echo "building jetgraph" >&2
(cd "$repo" && go build -o "$work/jetgraph" ./cmd/jetgraph)
if [[ ! -d "$here/node_modules" ]]; then
  (cd "$here" && npm ci --no-audit --no-fund)
fi
if [[ ! -x "$pyref/bin/langgraph" ]]; then
  python3 -m venv "$pyref"
  "$pyref/bin/pip" install --quiet 'langgraph-cli[inmem]==0.4.40'
fi

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Each server in its own process group, so that its children go with it; its pid in $started.
start() { # name, command...
  local name=$1
  shift
  setsid "$@" >"$work/$name.log" 2>&1 &
  started=$!
  pids+=("$started")
}
ready() { # name, port, pid
  for _ in $(seq 1 240); do
    if curl -fsS "http://127.0.0.1:$2/ok" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$3" 2>/dev/null; then break; fi
    sleep 0.5
  done
  echo "$1 did not start: see $work/$1.log" >&2
  tail -n 20 "$work/$1.log" >&2
  return 1
}

for p in "$jg_port" "$js_port" "$py_port" "$nt_port" "$sink_port" "$jst_port" "$pyt_port"; do
  if curl -s -o /dev/null "http://127.0.0.1:$p/"; then
    echo "port $p is in use: set JETGRAPH_BENCH_PORT to the first of seven free ports" >&2
    exit 1
  fi
done
rm -rf "$work/data" "$work/data-untraced" "$work/data-sink"
cd "$here"
start jetgraph "$work/jetgraph" serve --config langgraph.json --addr "127.0.0.1:$jg_port" \
  --data "$work/data" --python "$pyref/bin/python" ${JETGRAPH_BENCH_SERVE_FLAGS:-}
jg=$started
start langgraphjs ./node_modules/.bin/langgraphjs dev --config langgraph.js.json \
  --host 127.0.0.1 --port "$js_port" --no-browser
js=$started
start langgraph-py "$pyref/bin/langgraph" dev --config langgraph.py.json \
  --host 127.0.0.1 --port "$py_port" --no-browser
py=$started
ready jetgraph "$jg_port" "$jg"
# The second jetgraph once the first has bundled the graph into node_modules/.cache.
start jetgraph-untraced "$work/jetgraph" serve --config langgraph.json --addr "127.0.0.1:$nt_port" \
  --data "$work/data-untraced" --python "$pyref/bin/python" --no-self-trace ${JETGRAPH_BENCH_SERVE_FLAGS:-}
nt=$started
# The references traced as jetgraph traces by default: their LangSmith client sends every run to
# a third jetgraph (a sink, not measured) as it would send them to LangSmith.
start jetgraph-sink "$work/jetgraph" serve --addr "127.0.0.1:$sink_port" \
  --data "$work/data-sink" --no-self-trace
sink=$started
traced=(env LANGSMITH_TRACING=true "LANGSMITH_ENDPOINT=http://127.0.0.1:$sink_port/tracing" LANGSMITH_API_KEY=bench)
start langgraphjs-traced "${traced[@]}" ./node_modules/.bin/langgraphjs dev --config langgraph.js.json \
  --host 127.0.0.1 --port "$jst_port" --no-browser
jst=$started
start langgraph-py-traced "${traced[@]}" "$pyref/bin/langgraph" dev --config langgraph.py.json \
  --host 127.0.0.1 --port "$pyt_port" --no-browser
pyt=$started
ready langgraphjs "$js_port" "$js"
ready langgraph-py "$py_port" "$py"
ready jetgraph-untraced "$nt_port" "$nt"
ready jetgraph-sink "$sink_port" "$sink"
ready langgraphjs-traced "$jst_port" "$jst"
ready langgraph-py-traced "$pyt_port" "$pyt"

# What each target's CPU column adds up: the six process trees.
ps -o pid,ppid,rss,args --forest -g "$jg,$nt,$js,$py,$jst,$pyt" | cut -c1-160 >&2

args=("$@")
if [[ ${#args[@]} -eq 0 ]]; then args=(-n 400 -c 16); fi
"$work/jetgraph" bench compare "${args[@]}" \
  --target "name=jetgraph-ts,url=http://127.0.0.1:$jg_port,assistant=ts_echo,pid=$jg" \
  --target "name=jetgraph-ts-untraced,url=http://127.0.0.1:$nt_port,assistant=ts_echo,pid=$nt" \
  --target "name=langgraphjs-dev,url=http://127.0.0.1:$js_port,assistant=ts_echo,pid=$js" \
  --target "name=jetgraph-py,url=http://127.0.0.1:$jg_port,assistant=py_echo,pid=$jg" \
  --target "name=jetgraph-py-untraced,url=http://127.0.0.1:$nt_port,assistant=py_echo,pid=$nt" \
  --target "name=langgraph-dev,url=http://127.0.0.1:$py_port,assistant=py_echo,pid=$py" \
  --target "name=langgraphjs-dev-traced,url=http://127.0.0.1:$jst_port,assistant=ts_echo,pid=$jst" \
  --target "name=langgraph-dev-traced,url=http://127.0.0.1:$pyt_port,assistant=py_echo,pid=$pyt" \
  --target "name=jetgraph-go,url=http://127.0.0.1:$jg_port,assistant=echo,pid=$jg" \
  --target "name=jetgraph-go-untraced,url=http://127.0.0.1:$nt_port,assistant=echo,pid=$nt" \
  --ratio jetgraph-ts/langgraphjs-dev --ratio jetgraph-ts-untraced/langgraphjs-dev \
  --ratio jetgraph-py/langgraph-dev --ratio jetgraph-py-untraced/langgraph-dev \
  --ratio jetgraph-ts/langgraphjs-dev-traced --ratio jetgraph-py/langgraph-dev-traced \
  --ratio jetgraph-ts/jetgraph-go --ratio jetgraph-py/jetgraph-go \
  --ratio jetgraph-ts-untraced/jetgraph-go-untraced --ratio jetgraph-py-untraced/jetgraph-go-untraced
