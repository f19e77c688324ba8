#!/usr/bin/env bash
# H200 stage for issue 28: the retain-graph PR's CUDA tests and host time, ~3-4 min.
#
# Runs in gpu/h200.sh's state ($H200_STATE, default $HOME/h200) after its build and base
# stages, on the same machine session (their built .so files are linked into the trees):
#     bash gpu/rg_cuda.sh            # after e.g.: bash gpu/h200.sh start build base
# 1. trees from patches/series (gpu/pr_chains.py) on the base commit: retain-graph's own base
#    (the PR the series names it on) and retain-graph, the .so files linked from fork/;
# 2. TestRetainGraph of retain-graph's test file on retain-graph's sources, on its base's
#    sources (the tests of the fix must fail there), and on fork/ (the whole series), each
#    with its junit xml;
# 3. host time per step of bench/retain_graph_host.py (RG_ROUNDS rounds, default 8) (TE's LayerNorm, Linear and GELU ops,
#    which save tensors; normal training), retain-graph against its base, alternating order.
# Writes $S/rg/: summary.txt, tests-*.xml, tests-*.log, host.jsonl, and copies them to $OUT.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
S=${H200_STATE:-$HOME/h200}
PY=${H200_PYTHON:-python3}
SITE=$S/site
P=$S/proj
FORK=$P/fork
B=$S/base
RUN=$S/run
R=$S/rg
mkdir -p "$R" "$RUN"
[ -f "$S/build.ok" ] && [ -d "$B" ] || { echo "run gpu/h200.sh build and base first"; exit 1; }
top=$(git -C "$B" rev-parse HEAD)
: > "$R/summary.txt"

"$PY" "$REPO/gpu/pr_chains.py" "$P/patches/series" > "$R/chains.txt"
# retain-graph's own base, as patches/series names it (`# pr: retain-graph on BASE`)
RGB=$(sed -n 's/^# *pr: *retain-graph on \([^ ]*\).*/\1/p' "$P/patches/series")
[ -n "$RGB" ] || { echo "patches/series names no base for retain-graph"; exit 1; }
for slug in "$RGB" retain-graph; do
  tree=$R/tree-$slug
  if [ ! -d "$tree" ]; then
    names=$(awk -F'\t' -v s="$slug" '$1 == s {print $2}' "$R/chains.txt")
    files=(); for n in $names; do files+=("$P/patches/$n"); done
    git -C "$FORK" worktree add -q --detach "$tree" "$top" || exit 1
    git -C "$tree" -c user.name=h200 -c user.email=h200@localhost -c commit.cleanup=verbatim \
      am -q -3 "${files[@]}" > "$R/am-$slug.log" 2>&1 || { echo "$slug does not apply" | tee -a "$R/summary.txt"; exit 1; }
    (cd "$FORK" && find . -name '*.so' -not -path './build/*' -not -path './3rdparty/*' -not -path './.git/*') |
      while read -r so; do mkdir -p "$tree/$(dirname "$so")"; ln -sfn "$FORK/${so#./}" "$tree/$so"; done
  fi
  echo "$slug: $(git -C "$tree" log --oneline -1)" >> "$R/summary.txt"
done

tests=$R/tree-retain-graph/tests/pytorch/test_fusible_ops.py
for side in retain-graph "$RGB" series; do
  case $side in series) pp=$FORK:$SITE ;; *) pp=$R/tree-$side:$SITE ;; esac
  (cd "$RUN" && PYTHONPATH=$pp timeout 240 "$PY" -m pytest -q -p no:cacheprovider -rfs "$tests" \
    -k TestRetainGraph --junitxml="$R/tests-$side.xml") > "$R/tests-$side.log" 2>&1
  echo "TestRetainGraph (retain-graph's test file) on $side sources: rc=$? $(tail -n 1 "$R/tests-$side.log")" >> "$R/summary.txt"
done

: > "$R/host.jsonl"
for r in $(seq 0 $(( ${RG_ROUNDS:-8} - 1 ))); do
  order="retain-graph $RGB"; [ $((r % 2)) -eq 1 ] && order="$RGB retain-graph"
  for side in $order; do
    (cd "$RUN" && PYTHONPATH=$R/tree-$side:$SITE timeout 60 "$PY" "$REPO/bench/retain_graph_host.py") 2>> "$R/host.log" |
      tail -n 1 | "$PY" -c "import json,sys; print(json.dumps({'side': sys.argv[1], 'round': int(sys.argv[2]), 'seconds': json.loads(sys.stdin.read())}))" "$side" $r >> "$R/host.jsonl"
  done
done
"$PY" - "$R/host.jsonl" "$RGB" >> "$R/summary.txt" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
base = sys.argv[2]
sides = ("retain-graph", base)
med = {s: statistics.median(r["seconds"]["te_mlp8"] for r in rows if r["side"] == s) for s in sides}
per = {}
for r in rows:
    per.setdefault(r["round"], {})[r["side"]] = r["seconds"]["te_mlp8"]
ratios = sorted(v["retain-graph"] / v[base] for v in per.values() if len(v) == 2)
print(f"host time per step, te_mlp8, median of {len(rows) // 2} rounds: retain-graph {med['retain-graph'] * 1e6:.1f} us, {base} {med[base] * 1e6:.1f} us, ratio {med['retain-graph'] / med[base]:.3f}")
if ratios:
    print(f"paired ratio per round (retain-graph / {base}): median {statistics.median(ratios):.3f}, min {ratios[0]:.3f}, max {ratios[-1]:.3f}, n={len(ratios)}")
PYEOF
cat "$R/summary.txt"
[ -n "${OUT:-}" ] && cp "$R"/summary.txt "$R"/tests-*.xml "$R"/tests-*.log "$R"/host.jsonl "$OUT"/ 2>/dev/null
exit 0
