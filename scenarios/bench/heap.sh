#!/usr/bin/env bash
# The memory harness: builds the working tree (and, with --base, a base revision: git archive of
# it), serves each in turn with `jetgraph serve --pprof` on a fresh data folder, drives it with
# --bursts bursts of `jetgraph bench runs -n N -c C` (a new thread a run), and after each burst
# prints the heap in use after a forced collection (go_memstats_heap_inuse_bytes of /metrics,
# read after /debug/pprof/heap?gc=1), the live heap of that profile, and the process's RSS and
# peak RSS (/proc/<pid>/status). The heap profiles are kept in the work folder, for
# `go tool pprof -base` of two of them (README, Performance). Run from anywhere:
# `task bench:heap -- --bursts 10 -n 10000`.
#
#   --base REV          also measure this revision, after the working tree (default: none)
#   -n N                runs per burst (default 10000)
#   -c C                concurrency (default 16)
#   --bursts B          bursts (default 10)
#   --serve-flags F     more flags of `jetgraph serve`
#   --bench-flags F     more flags of `jetgraph bench runs` (--stateless: runs on temporary
#                       threads, deleted after each run; their events stay in the log)
#   --settle S          after the first burst and after the last, also wait S seconds and measure
#                       again (a "settled" row): what the server keeps for a while after a load
#                       (JetStream's 8-MB block caches, 10 s; its per-block subject state, 2 min;
#                       the output stream's retention, 2 min; message ids, 30 s to 1 min) is gone
#                       after 150, and what is left grows only with what is stored (default 0: no
#                       settled rows)
#   --port P            a free port (default 18310)
#   JETGRAPH_HEAP_DIR   work folder, kept (default: a temporary one, removed at the end)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
base="" n=10000 c=16 bursts=10 port=18310 serve_flags="" bench_flags="" settle=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --base) base=$2; shift 2 ;;
    -n) n=$2; shift 2 ;;
    -c) c=$2; shift 2 ;;
    --bursts) bursts=$2; shift 2 ;;
    --serve-flags) serve_flags=$2; shift 2 ;;
    --bench-flags) bench_flags=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --settle) settle=$2; shift 2 ;;
    *) echo "heap.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
for v in "$n" "$c" "$bursts" "$port"; do
  if ! [[ $v =~ ^[0-9]+$ && $v -ge 1 ]]; then
    echo "heap.sh: -n, -c, --bursts and --port must be positive integers" >&2
    exit 2
  fi
done
if ! [[ $settle =~ ^[0-9]+$ ]]; then
  echo "heap.sh: --settle must be a number of seconds" >&2
  exit 2
fi

if [[ -n ${JETGRAPH_HEAP_DIR:-} ]]; then
  work=$JETGRAPH_HEAP_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/jetgraph-heap.XXXXXX")
fi
pid=""
cleanup() {
  if [[ -n $pid ]]; then kill -- "-$pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  if [[ -z ${JETGRAPH_HEAP_DIR:-} ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT

if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
  echo "port $port is in use: give --port a free one" >&2
  exit 1
fi
head_commit=$(git -C "$repo" rev-parse HEAD)
dirty=""
if [[ -n $(git -C "$repo" status --porcelain --untracked-files=no) ]]; then dirty=" with uncommitted changes"; fi
echo "building the working tree (${head_commit:0:12}$dirty)" >&2
(cd "$repo" && go build -trimpath -o "$work/jetgraph-working" ./cmd/jetgraph)
targets=(working)
if [[ -n $base ]]; then
  base_commit=$(git -C "$repo" rev-parse --verify "$base^{commit}")
  echo "building base $base (${base_commit:0:12})" >&2
  rm -rf "$work/base-src" && mkdir -p "$work/base-src"
  git -C "$repo" archive "$base_commit" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && go build -trimpath -o "$work/jetgraph-base" ./cmd/jetgraph)
  targets+=(base)
fi

mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }
status_mib() { # pid, field of /proc/<pid>/status (in kB)
  awk -v f="$2:" '$1 == f { printf "%.0f", $2 / 1024 }' "/proc/$1/status"
}

url="http://127.0.0.1:$port"
# measure prints a row for target $1 after $2 runs at $3 runs/s; $4 names the profile's variant.
measure() {
  local name=$1 total=$2 rate=$3 variant=$4 metrics inuse cycles burst_gcs live
  curl -fsS "$url/debug/pprof/heap?gc=1" -o "$work/$name-heap-$total$variant.pb"
  metrics=$(curl -fsS "$url/metrics")
  inuse=$(awk '$1 == "go_memstats_heap_inuse_bytes" { print $2 }' <<<"$metrics")
  # Collections since the last row, the forced one left out.
  cycles=$(awk '$1 == "go_gc_duration_seconds_count" { print $2 }' <<<"$metrics")
  burst_gcs=$((cycles - gcs - 1)) gcs=$cycles
  # pprof prints the total as 12.3MB or 456.7kB (powers of 1024).
  live=$(go tool pprof -sample_index=inuse_space -top "$work/$name-heap-$total$variant.pb" 2>/dev/null |
    awk '/ total$/ { for (i = 1; i <= NF; i++) if ($i == "of") v = $(i+1) }
      END { u = v; sub(/^[0-9.]+/, "", u); x = v + 0
        if (u == "kB") x /= 1024; else if (u == "GB") x *= 1024; else if (u == "B") x /= 1048576
        printf "%.0f", x }')
  if [[ $rate =~ ^[0-9.]+$ ]]; then printf -v rate '%.0f' "$rate"; fi
  printf '%-8s %16s %8s %14s %14s %10s %10s %6s\n' "$name" "$total$variant" "$rate" "$(mib "${inuse:-0}")" "$live" \
    "$(status_mib "$pid" VmRSS)" "$(status_mib "$pid" VmHWM)" "$burst_gcs"
}
for name in "${targets[@]}"; do
  rm -rf "$work/$name-data"
  # shellcheck disable=SC2086 # the flags are words on purpose
  setsid "$work/jetgraph-$name" serve --addr "127.0.0.1:$port" --data "$work/$name-data" --pprof $serve_flags \
    >"$work/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do
    if curl -fsS "$url/ok" >/dev/null 2>&1 || ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.5
  done
  if ! curl -fsS "$url/ok" >/dev/null 2>&1; then
    echo "$name did not start:" >&2
    tail -n 20 "$work/$name.log" >&2
    exit 1
  fi
  echo
  echo "$name: jetgraph serve --pprof $serve_flags, $bursts bursts of $n runs at concurrency $c${bench_flags:+ ($bench_flags)}"
  printf '%-8s %16s %8s %14s %14s %10s %10s %6s\n' target runs runs/s "heap-inuse MiB" "live-heap MiB" "RSS MiB" "peak MiB" GCs
  total=0 gcs=0
  for b in $(seq 1 "$bursts"); do
    # bench runs exits non-zero when a run failed; its report names the errors.
    # shellcheck disable=SC2086 # the flags are words on purpose
    if ! report=$("$work/jetgraph-working" bench runs --url "$url" -n "$n" -c "$c" --json $bench_flags); then
      echo "$name: burst $b: runs failed:" >&2
      grep -A3 '"error_samples"' <<<"$report" >&2 || true
      exit 1
    fi
    total=$((total + n))
    rate=$(grep -o '"runs_per_second": *[0-9.]*' <<<"$report" | grep -o '[0-9.]*$' || echo "?")
    measure "$name" "$total" "$rate" ""
    if [[ $settle -gt 0 && ( $b -eq 1 || $b -eq $bursts ) ]]; then
      sleep "$settle"
      measure "$name" "$total" "-" "-settled"
    fi
  done
  kill -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
done
echo
echo "heap profiles: $work/<target>-heap-<runs>.pb (go tool pprof -base <first> <last>)"
