#!/usr/bin/env bash
# Measures sweeps on a machine with NVIDIA GPUs (docs/benchmarks.md, "Sweeps"):
#   scaling: TRIALS trials of a 2-64-64-64-4 fit (batch 65,536), each about SECONDS_PER_TRIAL s alone,
#            random sampler, no pruner, on each GPU count of GPUS (CUDA_VISIBLE_DEVICES 0..n-1);
#            prints trials per hour, a trial's training time, the GPU time not training a trial, and what a
#            trial after the first on its GPU costs beyond its training;
#   fractional: 6 trials of 4-16-4 (batch 4,096), --trials-per-gpu K for each K of KS on GPU 0, each
#            trial's samples/s against a headless run alone; DEVICE=cuda runs them on CUDA (start
#            NVIDIA's MPS daemon first, nvidia-cuda-mps-control -d, for trials side by side).
#   ITERATIONS=N skips the probe and gives each trial N steps; FIRST_GPU=F makes the GPUs of a
#   sweep F..F+n-1, so that sweeps on disjoint GPUs can run side by side (same steps, same GPUs).
# usage: TRIALS=12 SECONDS_PER_TRIAL=8 GPUS="1 2 4" KS="1 3" bash scripts/measure-sweeps.sh [scaling|fractional]
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}; WORK=${WORK:-$(mktemp -d)}
TRIALS=${TRIALS:-12}; SECONDS_PER_TRIAL=${SECONDS_PER_TRIAL:-8}; DEVICE=${DEVICE:-auto}

rate_of() { $PY -c "import json,sys; d=json.load(open(sys.argv[1]+'/summary.json')); print(d[sys.argv[2]])" "$1" "$2"; }

scaling() {
  local big="--hidden 64,64,64 --batch-size 65536 --quiet"
  local steps wall iter=${ITERATIONS:-} first=${FIRST_GPU:-0}
  mkdir -p "$WORK"
  if [ -z "$iter" ]; then
    $PY -m app --headless $big --iterations 2000 --out "$WORK/probe" > /dev/null 2>&1  # compiles
    $PY -m app --headless $big --iterations 4000 --out "$WORK/probe" > /dev/null 2>&1
    steps=$(rate_of "$WORK/probe" steps); wall=$(rate_of "$WORK/probe" wall_seconds)
    iter=$($PY -c "print(int($SECONDS_PER_TRIAL * $steps / $wall) // 100 * 100)")
  fi
  local about="about $SECONDS_PER_TRIAL s alone"; [ -n "${ITERATIONS:-}" ] && about="ITERATIONS"
  echo "a trial: $iter steps of 2-64-64-64-4 at batch 65536 ($about)"
  printf '{"base": {"hidden": [64, 64, 64], "batch_size": 65536, "iterations": %s}, "search": {"lr": {"loguniform": [0.001, 0.01]}}, "metric": "eval_loss", "trials": %s, "sampler": "random", "pruner": "none", "seed": 1}\n' \
    "$iter" "$TRIALS" > "$WORK/space.json"
  for gpus in ${GPUS:-1 2 4}; do
    local start end
    start=$(date +%s.%N)
    CUDA_VISIBLE_DEVICES=$(seq -s, "$first" $((first + gpus - 1))) $PY -m app sweep "$WORK/space.json" --out "$WORK/sweep-$gpus" --quiet
    end=$(date +%s.%N)
    $PY - "$WORK/sweep-$gpus" "$gpus" "$start" "$end" <<'PY'
import csv, sys
folder, gpus, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows = list(csv.DictReader(open(folder + "/trials.csv")))
wall, train = end - start, sum(float(r["wall_s"]) for r in rows if r["wall_s"])
print(f"{gpus} GPU(s): {len(rows)} trials in {wall:.1f} s = {3600 * len(rows) / wall:.0f} trials/h; a trial's training "
      f"{train / len(rows):.2f} s; GPU time not training, a trial {(wall * gpus - train) / len(rows):.2f} s; "
      f"{len({r['gpu'] for r in rows})} GPUs used")
# A trial after the first on its GPU: from the end of the one before (its files' last write) to its
# own end, less its training.
import os
ends = {r["trial"]: max(e.stat().st_mtime for e in os.scandir(f"{folder}/trials/{r['trial']}")) for r in rows}
gaps = []
for gpu in {r["gpu"] for r in rows}:
    mine = sorted((r for r in rows if r["gpu"] == gpu and r["wall_s"]), key=lambda r: ends[r["trial"]])
    gaps += [ends[b["trial"]] - ends[a["trial"]] - float(b["wall_s"]) for a, b in zip(mine, mine[1:])]
if gaps:
    print(f"  a trial after the first on its GPU, beyond its training: median {sorted(gaps)[len(gaps) // 2]:.2f} s, "
          f"largest {max(gaps):.2f} s ({len(gaps)} trials)")
PY
  done
}

fractional() {
  local small="--hidden 16 --batch-size 4096 --device $DEVICE --quiet"
  $PY -m app --headless $small --iterations 3000 --out "$WORK/alone" > /dev/null 2>&1  # compiles
  $PY -m app --headless $small --iterations 20000 --out "$WORK/alone" > /dev/null 2>&1
  local iter
  iter=$($PY -c "print(int(8 * $(rate_of "$WORK/alone" steps) / $(rate_of "$WORK/alone" wall_seconds)) // 100 * 100)")
  echo "alone: 4-16-4 at $($PY -c "print(round($(rate_of "$WORK/alone" samples_per_second) / 1e6, 1))") M samples/s"
  printf '{"base": {"hidden": [16], "batch_size": 4096, "iterations": %s}, "search": {"lr": {"loguniform": [0.001, 0.01]}}, "metric": "eval_loss", "trials": 6, "sampler": "random", "pruner": "none", "seed": 2}\n' \
    "$iter" > "$WORK/small.json"
  for k in ${KS:-1 3}; do
    CUDA_VISIBLE_DEVICES=0 $PY -m app sweep "$WORK/small.json" --out "$WORK/frac-$k" --trials-per-gpu "$k" --device "$DEVICE" --quiet
    $PY - "$WORK/frac-$k" "$WORK/alone" "$k" <<'PY'
import csv, json, sys
alone = json.load(open(sys.argv[2] + "/summary.json"))["samples_per_second"]
for r in csv.DictReader(open(sys.argv[1] + "/trials.csv")):
    rate = json.load(open(f"{sys.argv[1]}/trials/{r['trial']}/summary.json"))["samples_per_second"]
    print(f"  --trials-per-gpu {sys.argv[3]}, trial {r['trial']}: {rate / 1e6:.1f} M samples/s = {rate / alone:.2f} of alone")
PY
  done
}

case "${1:-both}" in
  scaling) scaling ;;
  fractional) fractional ;;
  *) fractional; scaling ;;
esac
