# Shared by bench/mem_identity.sh and bench/mem_identity_bulk.sh (sourced, not run): `run ARGS...`
# runs `sfumato ARGS... --trace off [extra...] --out DIR` and prints its summary.json figures
# (wall-clock fields dropped), one line per figure, labelled with the command; with stats=1 also
# its stats.h5 as text (`sfumato stats`), lines matching stats_drop (a grep pattern) left out.
# The sourcing script sets: sf (the binary), out (a scratch directory), and optionally
# extra (an array of options added to every run), stats, stats_drop.
n=0
run() {
    n=$((n + 1))
    local label="$*"
    label="${label//$out/TMP}"  # the temporary directory's name differs from run to run
    "$sf" "$@" --trace off "${extra[@]}" --out "$out/$n" >/dev/null 2>&1 || { echo "FAILED: $label"; return; }
    python3 - "$out/$n/summary.json" "$label" <<'PY'
import json, sys
drop = ("wall", "host", "seconds", "speed", "per_s", "mips", "elapsed", "date", "time_s", "out", "mem_threads",
        "compile_s", "plan_s", "command_line")
def walk(p, v):
    if isinstance(v, dict):
        for k in sorted(v):
            if any(d in k.lower() for d in drop): continue
            walk(f"{p}.{k}", v[k])
    elif isinstance(v, list):
        for i, x in enumerate(v): walk(f"{p}[{i}]", x)
    else:
        print(f"{sys.argv[2]} :: {p} = {v!r}")
walk("", json.load(open(sys.argv[1])))
PY
    if [ "${stats:-}" = 1 ] && [ -f "$out/$n/stats.h5" ]; then
        if [ -n "${stats_drop:-}" ]; then
            "$sf" stats "$out/$n/stats.h5" | grep -v -i "$stats_drop" | sed "s|^|$label :: stats |"
        else
            "$sf" stats "$out/$n/stats.h5" | sed "s|^|$label :: stats |"
        fi
    fi
}
