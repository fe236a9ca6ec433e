#!/usr/bin/env bash
# Measures what evaluations cost headless runs on NVIDIA GPUs (docs/benchmarks.md, "Evaluations"):
#   alone:    one run on GPU 0 with an evaluation every 100 steps and one with none until the end
#             (--eval-every 100000); the difference over the evaluations is an evaluation's cost;
#   together: the same runs on each GPU of GPUS alone, then on all of them at once (--gpu 0, 1, ...):
#             each run's training seconds at once against alone, and the process's CPU seconds.
#   NETWORK: 2-64-64-64-4 half, batch 65,536 (the options), ITERATIONS steps (60,000). APP_DIR runs another checkout's
#   app (an older commit, unpacked with git archive), for a before/after table.
# usage: GPUS="0 1" ITERATIONS=60000 bash scripts/measure-evaluations.sh [alone|together]
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD; PY=${PYTHON:-python3}; WORK=${WORK:-$(mktemp -d)}; APP_DIR=${APP_DIR:-$ROOT}
ITERATIONS=${ITERATIONS:-60000}; GPUS=${GPUS:-0 1}; mkdir -p "$WORK"
NETWORK=${NETWORK:---hidden 64,64,64 --precision half --batch-size 65536}
RUN="$NETWORK --iterations $ITERATIONS --quiet"

wall_of() { $PY -c "import json,sys; print(round(json.load(open(sys.argv[1]+'/summary.json'))['wall_seconds'], 3))" "$1"; }

# one run: headless, into $WORK/$1, on GPU $2, evaluating every $3 steps (then options of its own); its
# CPU seconds to $WORK/$1.cpu
one() {
  local name=$1 gpu=$2 every=$3 TIMEFORMAT='%U %S'; shift 3
  { time (cd "$APP_DIR" && $PY -m app --headless $RUN --gpu "$gpu" --eval-every "$every" "$@" --out "$WORK/$name" > /dev/null 2>&1); } 2> "$WORK/$name.time"
  awk '{print $1 + $2}' "$WORK/$name.time" > "$WORK/$name.cpu"
}

alone() {
  one warm 0 100 --iterations 2000  # compiles, fills the caches
  for every in 100 100000; do one "alone-$every" 0 "$every"; done
  local with without
  with=$(wall_of "$WORK/alone-100"); without=$(wall_of "$WORK/alone-100000")
  echo "GPU 0 alone, $ITERATIONS steps: $with s evaluating every 100 steps (CPU $(cat "$WORK/alone-100.cpu") s)," \
    "$without s with none until the end (CPU $(cat "$WORK/alone-100000.cpu") s):" \
    "$($PY -c "print(round(1000 * ($with - $without) / ($ITERATIONS // 100 - 1), 3))") ms an evaluation"
}

together() {
  for gpu in $GPUS; do one "warm-$gpu" "$gpu" 100 --iterations 2000; done
  for every in 100 100000; do
    for gpu in $GPUS; do one "solo-$every-$gpu" "$gpu" "$every"; done
    for gpu in $GPUS; do one "both-$every-$gpu" "$gpu" "$every" & done
    wait
    for gpu in $GPUS; do
      local solo both
      solo=$(wall_of "$WORK/solo-$every-$gpu"); both=$(wall_of "$WORK/both-$every-$gpu")
      echo "--eval-every $every, GPU $gpu: $solo s alone, $both s with $(echo $GPUS | wc -w) at once" \
        "($($PY -c "print(round($both / $solo, 3))")x); CPU $(cat "$WORK/solo-$every-$gpu.cpu") s and $(cat "$WORK/both-$every-$gpu.cpu") s"
    done
  done
}

case "${1:-both}" in
  alone) alone ;;
  together) together ;;
  *) alone; together ;;
esac
