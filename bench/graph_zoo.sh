#!/usr/bin/env bash
# The graph executor's acceptance figures on full-size zoo models (too slow for the test suite,
# whose small variants are tests/regression/graph_models_test.cpp):
#   bench/graph_zoo.sh check [MODEL...]   functional mode with --reference on each preset: the
#                                         check against the host interpreter, wall time, memory
#   bench/graph_zoo.sh speed              ResNet-50, batch 1, 910B-like: whole-process wall time
#                                         in timing and in functional mode
#   bench/graph_zoo.sh memory             peak activation memory with and without reuse
#                                         (resnet50, bert_base; plan only, timing mode)
#   bench/graph_zoo.sh fusion [MODEL]     all passes vs --passes none (kernels, memory traffic,
#                                         inference time; 910B-like, timing mode)
# SFUMATO=path/to/sfumato overrides the binary; CONFIGS="tiny ascend910b-like" the presets of
# `check` (default: all three).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${SFUMATO:-$root/build/bin/sfumato}"
what="${1:-check}"
shift || true
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

wall() {  # wall seconds of "$@" (output to $tmp/log)
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >"$tmp/log" 2>&1 || true
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}

summary() {  # python expression over summary.json `s`
    /usr/bin/python3 -c "import json,sys; s=json.load(open('$tmp/out/summary.json')); print($1)"
}

case "$what" in
check)
    models=("$@")
    [ ${#models[@]} -gt 0 ] || models=(mlp resnet18 resnet50 mobilenet_v2 squeezenet bert_base gpt2_small)
    for cfg in ${CONFIGS:-tiny ascend910-like ascend910b-like}; do
        for m in "${models[@]}"; do
            rm -rf "$tmp/out"
            w=$(wall "$bin" run "zoo:$m" --config "$root/configs/$cfg.ini" --mode functional --reference \
                --trace off --out "$tmp/out")
            if [ -f "$tmp/out/summary.json" ]; then
                printf "%-14s %-16s wall %7.1f s  %s\n" "$m" "$cfg" "$w" "$(grep -m1 'vs reference' "$tmp/log" | sed 's/^ *//')"
            else
                printf "%-14s %-16s wall %7.1f s  FAILED: %s\n" "$m" "$cfg" "$w" "$(tail -1 "$tmp/log")"
            fi
        done
    done
    ;;
speed)
    cfg="$root/configs/ascend910b-like.ini"
    for mode in timing functional; do
        rm -rf "$tmp/out"
        w=$(wall "$bin" run zoo:resnet50 --config "$cfg" --mode "$mode" --trace off --out "$tmp/out")
        printf "resnet50 ascend910b-like %-10s wall %6.2f s  %s\n" "$mode" "$w" \
            "$(summary '"inference %.1f us, %d kernels, load %.1f us" % (s["inference"]["mean_latency_us"], s["graph"]["kernels"], s["load"]["time_us"])')"
    done
    ;;
memory)
    for m in resnet50 bert_base; do
        rm -rf "$tmp/out"
        "$bin" run "zoo:$m" --config "$root/configs/ascend910b-like.ini" --mode timing --trace off \
            --out "$tmp/out" >"$tmp/log" 2>&1
        printf "%-10s %s\n" "$m" "$(summary '"peak %.2f MiB with reuse, %.2f MiB without (%.1f %%)" % (s["memory"]["peak_bytes"]/2**20, s["memory"]["peak_bytes_no_reuse"]/2**20, 100*s["memory"]["reuse_ratio"])')"
    done
    ;;
fusion)
    m="${1:-resnet50}"
    for passes in all none; do
        rm -rf "$tmp/out"
        "$bin" run "zoo:$m" --config "$root/configs/ascend910b-like.ini" --mode timing --trace off \
            --passes "$passes" --out "$tmp/out" >"$tmp/log" 2>&1
        # The kernels' global-memory traffic (MTE2 reads, MTE3 and FixPipe writes into L2/HBM;
        # the weight upload is SDMA) and what reached the HBM (0 when L2 holds the working set).
        gm=$("$bin" stats "$tmp/out/stats.h5" l2/ /bytes | awk '/l2\/(mte2|mte3|fix)\// {s += $2} END {printf "%.1f", s / 1048576}')
        hbm=$("$bin" stats "$tmp/out/stats.h5" hbm/bytes_ | awk '{s += $2} END {printf "%.1f", s / 1048576}')
        printf "%-10s --passes %-5s %s, global memory %s MiB, HBM %s MiB\n" "$m" "$passes" \
            "$(summary '"%d kernels, inference %.1f us" % (s["graph"]["kernels"], s["inference"]["mean_latency_us"])')" "$gm" "$hbm"
    done
    ;;
*)
    echo "usage: bench/graph_zoo.sh check|speed|memory|fusion [...]" >&2
    exit 2
    ;;
esac
