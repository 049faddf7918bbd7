#!/usr/bin/env bash
# The A/B harness: builds a base revision (git archive of --base) and the working tree, serves
# each with `jetgraph serve` on a fresh data folder, and drives both with the working tree's
# `jetgraph bench compare`, alternating bursts over --rounds rounds, with the ratio working/base
# (README, Performance). Run from anywhere: `task bench:ab BASE=main -- -n 2000`.
#
#   --base REV          the revision to compare against (default HEAD)
#   -n N                measured runs per server (default 2000)
#   -c C                concurrency (default 16)
#   --rounds R          rounds; each server runs N/R runs a round, in turn (default 5)
#   --assistant ID      assistant or graph id (default echo)
#   --serve-flags F     more flags of `jetgraph serve` for both (e.g. "--sync always")
#   --base-flags F      more flags for the base only; --working-flags F for the working tree only
#   --port P            first of three free ports (default 18300)
#   --reference js      also drive the JS reference dev server (`langgraphjs dev` serving the same
#                       echo graph in TypeScript, scenarios/hosted/bench/src/echo.ts) in the same
#                       rounds, with the ratio working/langgraphjs-dev
#   --json              the report as JSON
#   JETGRAPH_AB_DIR     work folder (default: a temporary one, removed at the end)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
base=HEAD n=2000 c=16 rounds=5 assistant=echo port=18300 json=()
serve_flags="" base_flags="" working_flags="" reference=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --base) base=$2; shift 2 ;;
    -n) n=$2; shift 2 ;;
    -c) c=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --assistant) assistant=$2; shift 2 ;;
    --serve-flags) serve_flags=$2; shift 2 ;;
    --base-flags) base_flags=$2; shift 2 ;;
    --working-flags) working_flags=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --json) json=(--json); shift ;;
    --reference) reference=$2; shift 2 ;;
    *) echo "ab.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
if ! [[ $n =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ && $n -ge 1 && $rounds -ge 1 ]]; then
  echo "ab.sh: -n and --rounds must be positive integers" >&2
  exit 2
fi
if [[ -n $reference && $reference != js ]]; then
  echo "ab.sh: --reference takes js" >&2
  exit 2
fi
burst=$(((n + rounds - 1) / rounds))
base_port=$port working_port=$((port + 1)) ref_port=$((port + 2))

if [[ -n ${JETGRAPH_AB_DIR:-} ]]; then
  work=$JETGRAPH_AB_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/jetgraph-ab.XXXXXX")
fi
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -z ${JETGRAPH_AB_DIR:-} ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT

base_commit=$(git -C "$repo" rev-parse --verify "$base^{commit}")
head_commit=$(git -C "$repo" rev-parse HEAD)
dirty=""
if [[ -n $(git -C "$repo" status --porcelain --untracked-files=no) ]]; then dirty=" with uncommitted changes"; fi

# -trimpath: both builds name their files by module path, so the shared build cache serves
# whatever the two trees have in common.
echo "building base $base (${base_commit:0:12})" >&2
rm -rf "$work/base-src" && mkdir -p "$work/base-src"
git -C "$repo" archive "$base_commit" | tar -x -C "$work/base-src"
(cd "$work/base-src" && go build -trimpath -o "$work/jetgraph-base" ./cmd/jetgraph)
echo "building the working tree (${head_commit:0:12}$dirty)" >&2
(cd "$repo" && go build -trimpath -o "$work/jetgraph-working" ./cmd/jetgraph)

for p in "$base_port" "$working_port" "$ref_port"; do
  if curl -s -o /dev/null "http://127.0.0.1:$p/"; then
    echo "port $p is in use: give --port the first of three free ports" >&2
    exit 1
  fi
done

# Each server in its own process group (its children go with it); its pid in $started.
start() { # name, port, flags
  local name=$1 p=$2 flags=$3
  rm -rf "$work/$name-data"
  # shellcheck disable=SC2086 # the flags are words on purpose
  setsid "$work/jetgraph-$name" serve --addr "127.0.0.1:$p" --data "$work/$name-data" $serve_flags $flags \
    >"$work/$name.log" 2>&1 &
  started=$!
  pids+=("$started")
}
ready() { # name, port, pid
  for _ in $(seq 1 240); do
    if curl -fsS "http://127.0.0.1:$2/ok" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$3" 2>/dev/null; then break; fi
    sleep 0.5
  done
  echo "$1 did not start:" >&2
  tail -n 20 "$work/$1.log" >&2
  return 1
}
start base "$base_port" "$base_flags"
base_pid=$started
start working "$working_port" "$working_flags"
working_pid=$started
ready base "$base_port" "$base_pid"
ready working "$working_port" "$working_pid"
reference_args=()
if [[ $reference == js ]]; then
  refdir="$repo/scenarios/hosted/bench"
  if [[ ! -d "$refdir/node_modules" ]]; then (cd "$refdir" && npm ci --no-audit --no-fund >&2); fi
  (cd "$refdir" && exec setsid ./node_modules/.bin/langgraphjs dev --config langgraph.js.json \
    --host 127.0.0.1 --port "$ref_port" --no-browser >"$work/langgraphjs-dev.log" 2>&1) &
  ref_pid=$!
  pids+=("$ref_pid")
  ready langgraphjs-dev "$ref_port" "$ref_pid"
  reference_args=(--target "name=langgraphjs-dev,url=http://127.0.0.1:$ref_port,assistant=ts_echo,pid=$ref_pid"
    --ratio working/langgraphjs-dev)
fi

echo "jetgraph A/B: base $base (${base_commit:0:12}) against the working tree (${head_commit:0:12}$dirty)"
echo "serve flags: both [${serve_flags}], base [${base_flags}], working [${working_flags}]"
"$work/jetgraph-working" bench compare -n "$n" -c "$c" --burst "$burst" --assistant "$assistant" "${json[@]}" \
  --target "name=base,url=http://127.0.0.1:$base_port,pid=$base_pid" \
  --target "name=working,url=http://127.0.0.1:$working_port,pid=$working_pid" \
  --ratio working/base "${reference_args[@]}"
