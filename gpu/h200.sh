#!/usr/bin/env bash
# H200 driver for issue 18: TE's own build of the series, L0's te.ops files, channel blocks, perf.
#
# RUNBOOK: one nvidia-h200, 30 min of device time. The machine goes back 30 s after a call
# returns: issue each call as soon as the previous one returns.
# Make the kit first: bash gpu/kit.sh TE_MIRROR CUTLASS_MIRROR (it also bundles HEAD).
# Before call 1, on the workstation (optional; pins and records the project commit):
#     git bundle create .gpukit/project.bundle HEAD
# Kit (git-ignored, ~28 MB): .gpukit/base.tar.xz (TE d0067d0da, shallow, + cutlass 57e3cfb47
# include/ and tools/util/include/), .gpukit/wheels/ (pydantic stack, cudnn-frontend),
# .gpukit/te-series-cache/dist/ (TE 2.20.2's py wheel: the #3410 prerequisite's fuser.py),
# .gpukit/gpu-baseline-failed.txt (known base failures of test_fusible_ops.py).
#
#  call 1  run(carry=[".gpukit"], timeout_s=600, kind="nvidia-h200"):
#            bash gpu/h200.sh start && bash gpu/h200.sh wait 570
#          setup ~10 s (wheels, base, project), then the whole pipeline runs under setsid on
#          its own: build (10-12 min) -> base tree (~5 s) -> L0 (alone on the GPU, <= 480 s,
#          less if the build ran long) -> failed ids rerun alone on base and patched, with the
#          channel blocks alongside (~3 min) -> perf (alone; whatever is left before the
#          deadline, <= 300 s) -> summary. Returns after ~9.7 min, build still running.
#  call 2  run(timeout_s=600):   bash gpu/h200.sh wait 585     (build ends, L0 runs)
#  call 3  run(timeout_s=600):   bash gpu/h200.sh wait 585     (returns when the pipeline ends)
#  The pipeline ends itself by H200_DEADLINE_S (1500 s after `start`): ~25 min of calls plus
#  the machine's start (1-2 min) = ~27 min of device time. Each `wait` ends with `collect`,
#  so every call brings back what exists so far in $OUT (<= 6 files): summary.md,
#  l0-compare.md, commands.txt (each exact L0 command line), blocks.jsonl, perf.json,
#  logs.tar.xz (trimmed logs, every junit xml). A lost call loses nothing: state lives in
#  $H200_STATE (default $HOME/h200) until the machine goes back; the next `wait` resumes.
#  Other verbs: status, collect, setup, and one stage alone under setsid: build base l0
#  l0-base blocks basetests perf (e.g. `bash gpu/h200.sh l0-base && bash gpu/h200.sh wait 300`).
#  l0-base+blocks also runs basetests: the series' own tests (the patched test file) once on the
#  patched sources and once on the base's (H200_BASETESTS_K selects them), to show that each
#  test of a fix fails on the base. Session 7 ran `start build base l0 l0-base+blocks` (no perf)
#  with H200_DEADLINE_S=1450 H200_AFTER_L0_S=260 H200_BASE_ROUTING=both.
#  v4 (session 10) ran `start build base prs l0 l0-base hostperf` with
#  H200_L0_TREE=$H200_STATE/prs/tree-set H200_L0_ARGS="--only test_fusible_ops --workers 12"
#  H200_PERF_TREE=$H200_STATE/prs/tree-set: each PR of the follow-up set on its own base (prs:
#  its tests there and on the base), test_fusible_ops.py whole on the set, its failed ids on
#  the base, and host time per step of bench/channels_bench.py, the set against the base.
#  Fuser overhead (issue 27): `start build base prs overhead` with H200_PRS="contract
#  channel-routing" (each PR tip as its own tree, its tests there and on the base) runs
#  gpu/hostperf.py over main ($B), those tips and main again (the null row): one worker per
#  tree, pinned to one CPU, blocks alternating tree by tree, ratios paired per round
#  (H200_OVERHEAD_TREES, _ROUNDS (30), _STEPS (50), _CPU (3), _S (420 s budget)); collect
#  brings back overhead.txt (the report) and overhead.jsonl.
#  Session 22 ran `start build base prs overhead l0 l0-base` with H200_PRS="contract
#  channel-routing backward-boundary retain-graph", H200_OVERHEAD_TREES the same,
#  H200_PRS_K adding those PRs' tests, H200_L0_ARGS="--only test_fusible_ops --workers 12".
#  Retain-graph (issue 28): `start build base rg l0 l0-base` with H200_L0_ARGS="--only
#  test_fusible_ops --workers 12": stage rg is gpu/rg_cuda.sh; collect brings back rg.tar.xz.
#  Session 27 (H100 given for nvidia-h200): `start build base rg l0 l0-base prs overhead` with
#  H200_DEADLINE_S=1500: the build took 831 s, rg 400 s, and the L0 budget, (deadline - now -
#  H200_AFTER_L0_S), fell to its 120 s floor: test_fusible_ops.py was cut at 98% with no ids.
#  For the whole file after a long build, run l0 right after base, or set H200_AFTER_L0_S=0.
#  Knobs: H200_BASE_ROUTING (caller; both runs the channel halves on the base too),
#  H200_L0_BUDGET (480), H200_L0_SLOTS (20 xdist workers + serial files at once),
#  H200_L0_ARGS (e.g. "--only test_fusible_ops"), H200_PERF_ROUNDS (8), H200_BLOCKS_S (200).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
S=${H200_STATE:-$HOME/h200}
PY=${H200_PYTHON:-python3}
KIT=$REPO/.gpukit
SITE=$S/site
P=$S/proj                       # the project: from the bundle, else a copy of the tree
FORK=$P/fork
B=$S/base                       # base worktree: #3410 prerequisite commit, build's .so linked in
RUN=$S/run                      # neutral working directory (neither tree)
LOG=$S/logs
DEADLINE_S=${H200_DEADLINE_S:-1500}
STAGES_ALL="build base l0 l0-base+blocks perf"
mkdir -p "$S" "$LOG" "$RUN" "$S/tmp"

say() { echo "[h200 $(date -u +%H:%M:%S)] $*"; }
elapsed() { local t0; t0=$(cat "$S/start.time" 2>/dev/null || date +%s); echo $(( $(date +%s) - t0 )); }
left() { echo $(( DEADLINE_S - $(elapsed) )); }
pipeline_pid() { local p; p=$(cat "$S/pipeline.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p"; }
pyenv_patched() { echo "$SITE"; }
pyenv_base() { echo "$B:$SITE"; }

setup() {
  [ -f "$S/start.time" ] || date +%s > "$S/start.time"
  if [ ! -f "$SITE/.ok" ]; then
    say "wheels -> $SITE"
    local whl=() w
    for w in "$KIT"/wheels/*.whl; do
      case $(basename "$w") in
        typing_extensions-*)  # only if the image's is older than the wheel (pydantic needs it)
          local v; v=$(basename "$w" | cut -d- -f2)
          if "$PY" - "$v" <<'EOF' 2>/dev/null; then whl+=("$w"); fi ;;
import sys
try:
    import importlib.metadata as m
    have = tuple(int(p) for p in m.version("typing_extensions").split(".")[:3])
    need = tuple(int(p) for p in sys.argv[1].split(".")[:3])
    sys.exit(1 if have >= need else 0)  # 0: install the wheel
except Exception:  # pylint: disable=broad-except
    sys.exit(0)
EOF
        *) whl+=("$w") ;;
      esac
    done
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target "$SITE" "${whl[@]}" || { say "wheel install failed"; return 1; }
    printf '%s\n' "${whl[@]##*/}" > "$SITE/.ok"
  fi
  if [ ! -d "$S/src/TransformerEngine/.git" ]; then
    say "base clone -> $S/src"
    mkdir -p "$S/src"
    tar -xJf "$KIT/base.tar.xz" -C "$S/src" ||
      "$PY" -c "import tarfile,sys;tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$KIT/base.tar.xz" "$S/src" ||
      { say "base unpack failed"; return 1; }
  fi
  mkdir -p "$S/cache/dist"
  cp -n "$KIT"/te-series-cache/dist/*.whl "$S/cache/dist/" 2>/dev/null
  cp -n "$KIT/gpu-baseline-failed.txt" "$S/" 2>/dev/null
  if [ ! -f "$P/patches/series" ]; then
    if [ -f "$KIT/project.bundle" ]; then
      say "project from bundle"
      git clone -q "$KIT/project.bundle" "$P" || return 1
      git -C "$P" rev-parse HEAD > "$S/project.commit"
    else
      say "project copied from the working tree (no bundle)"
      mkdir -p "$P"
      cp -a "$REPO/patches" "$REPO/src" "$REPO/te-series" "$REPO/pyproject.toml" "$P/"
      echo "working tree (no bundle)" > "$S/project.commit"
    fi
    if ! diff -rq "$REPO/patches" "$P/patches" > "$S/patches.diff" 2>&1; then
      say "WARNING: the working tree's patches/ differ from the project's (see $S/patches.diff)"
    fi
  fi
  (cd "$P/patches" && sha256sum series ./*.patch) > "$S/patches.sha256"
}

# ----------------------------------------------------------------------------- stages
st_build() {
  [ -f "$S/build.ok" ] && { say "build: done before"; return 0; }
  say "build: te-series build --te-src (TE's pipeline, MAX_JOBS=$(nproc))"
  local t0=$SECONDS
  (cd "$P" && TMPDIR=$S/tmp TE_SERIES_ROOT=$P TE_SERIES_CACHE=$S/cache PYTHONPATH=$P/src:$SITE \
    "$PY" -m te_series build --te-src "$S/src/TransformerEngine") > "$LOG/build.log" 2>&1
  local rc=$?
  echo "build rc=$rc $((SECONDS - t0)) s" | tee -a "$LOG/build.log"
  [ $rc -eq 0 ] || return $rc
  git -C "$FORK" log --oneline -10 > "$S/fork.log"
  (cd "$RUN" && PYTHONPATH=$SITE "$PY" -c "import torch, transformer_engine.pytorch.ops.fuser as f, transformer_engine as t; print(t.__file__); print(f.__file__); print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())") >> "$S/fork.log" 2>&1
  grep -q "^$FORK/" "$S/fork.log" || { say "patched TE does not import from $FORK"; cat "$S/fork.log"; return 1; }
  touch "$S/build.ok"
}

st_base() {
  [ -f "$S/build.ok" ] || { say "base: build first"; return 1; }
  local top; top=$("$PY" -c "import json,sys;print(json.load(open(sys.argv[1]))['base'])" "$(git -C "$FORK" rev-parse --path-format=absolute --git-path te-series)/state.json")
  if [ ! -d "$B/.git" ] && [ ! -f "$B/.git" ]; then
    git -C "$FORK" worktree add -q --detach "$B" "$top" || return 1
  fi
  (cd "$FORK" && find . -name '*.so' -not -path './build/*' -not -path './3rdparty/*' -not -path './.git/*') |
    while read -r so; do mkdir -p "$B/$(dirname "$so")"; ln -sfn "$FORK/${so#./}" "$B/$so"; done
  {
    echo "base worktree $B at $(git -C "$B" log --oneline -1)"
    echo "linked: $(cd "$FORK" && find . -name '*.so' -not -path './build/*' -not -path './3rdparty/*' | tr '\n' ' ')"
    (cd "$RUN" && PYTHONPATH=$(pyenv_base) "$PY" -c "
import hashlib, torch, transformer_engine as t, transformer_engine.pytorch.ops.fuser as f
d = open(f.__file__, 'rb').read()
print(t.__file__); print(f.__file__, 'blob', hashlib.sha1(b'blob %d\0' % len(d) + d).hexdigest())")
  } > "$S/base.log" 2>&1
  cat "$S/base.log"
  grep -q "^$B/transformer_engine/__init__.py" "$S/base.log" || { say "base does not import from $B"; return 1; }
  grep -q "blob 2500002700220dbe9ac33e21011988db9b2fe997" "$S/base.log" || say "WARNING: base fuser.py is not #3410's post-image"
  touch "$S/base.ok"
}

st_l0() {
  [ -f "$S/l0.done" ] && { say "l0: done before"; return 0; }
  local budget=${H200_L0_BUDGET:-480} room
  room=$(( $(left) - ${H200_AFTER_L0_S:-330} ))   # keep time for reruns, blocks and perf
  [ "$room" -lt "$budget" ] && budget=$room
  [ "$budget" -lt 120 ] && budget=120
  say "l0: every te.ops file of L0 on the patched build (budget $budget s)"
  local tree=${H200_L0_TREE:-$FORK} pp
  pp=$(pyenv_patched); [ "$tree" = "$FORK" ] || pp=$tree:$SITE
  # shellcheck disable=SC2086
  "$PY" "$REPO/gpu/h200_l0.py" run --te-path "$tree" --out "$S/l0" --cwd "$RUN" \
    --pythonpath "$pp" --slots "${H200_L0_SLOTS:-20}" --budget "$budget" \
    ${H200_L0_ARGS:-} > "$LOG/l0.log" 2>&1  # word-split on purpose
  touch "$S/l0.done"
}

st_l0_base() {
  [ -f "$S/base.ok" ] || st_base || return 1
  say "l0-base: failed ids alone, on the base and on the patched tree"
  local tree=${H200_L0_TREE:-$FORK} pp
  pp=$(pyenv_patched); [ "$tree" = "$FORK" ] || pp=$tree:$SITE
  "$PY" "$REPO/gpu/h200_l0.py" rerun --l0 "$S/l0" --base "$B" --patched "$tree" --out "$S/l0-rerun" \
    --cwd "$RUN" --pythonpath-base "$(pyenv_base)" --pythonpath-patched "$pp" \
    --budget "${H200_RERUN_BUDGET:-150}" > "$LOG/l0-rerun.log" 2>&1
  "$PY" "$REPO/gpu/h200_l0.py" compare --l0 "$S/l0" --rerun "$S/l0-rerun" \
    --known "$S/gpu-baseline-failed.txt" > "$S/l0-compare.md" 2>> "$LOG/l0-rerun.log"
  touch "$S/l0-base.done"
}

st_blocks() {  # patched (both routings) and base (caller-routed halves) side by side
  say "blocks: channel-routed against caller-routed (patched; caller parts on the base)"
  local docs=$FORK/docs/examples/op_fuser/moe_channels.py
  (cd "$RUN" && PYTHONPATH=$(pyenv_patched) PYTHONUNBUFFERED=1 timeout "${H200_BLOCKS_S:-200}" "$PY" \
    "$REPO/gpu/channel_blocks.py" --label patched --docs-example "$docs" \
    > "$S/blocks-patched.jsonl" 2> "$LOG/blocks-patched.log"; echo "rc=$?" >> "$LOG/blocks-patched.log") &
  local a=$!
  (cd "$RUN" && PYTHONPATH=$(pyenv_base) PYTHONUNBUFFERED=1 timeout "${H200_BLOCKS_S:-200}" "$PY" \
    "$REPO/gpu/channel_blocks.py" --label base --routing "${H200_BASE_ROUTING:-caller}" \
    > "$S/blocks-base.jsonl" 2> "$LOG/blocks-base.log"; echo "rc=$?" >> "$LOG/blocks-base.log") &
  wait $a $!
  touch "$S/blocks.done"
}

st_basetests() {  # the series' own tests (the patched test file) on the base's Python sources
  [ -f "$S/base.ok" ] || st_base || return 1
  local k=${H200_BASETESTS_K:-"TestExtraTensorChannels or TestRetainGraph or test_backward_stops_at_its_forward_boundary or test_backward_fusion_across_boundary or in_place_residual"}
  say "basetests: -k '$k' on the base and on the patched tree"
  local side pp
  for side in base patched; do
    if [ "$side" = base ]; then pp=$(pyenv_base); else pp=$(pyenv_patched); fi
    (cd "$RUN" && PYTHONPATH=$pp timeout "${H200_BASETESTS_S:-240}" "$PY" -m pytest -q -p no:cacheprovider \
      -n 4 "$FORK/tests/pytorch/test_fusible_ops.py" -k "$k" --junitxml="$S/basetests-$side.xml" -rf \
      > "$LOG/basetests-$side.log" 2>&1; echo "rc=$?" >> "$LOG/basetests-$side.log")
    echo "pytest $FORK/tests/pytorch/test_fusible_ops.py -k '$k' (PYTHONPATH=$side)" >> "$S/basetests.commands"
  done
  touch "$S/basetests.done"
}

st_prs() {  # each PR on its own base: its trees, its tests there and on the base
  [ -f "$S/base.ok" ] || st_base || return 1
  local k=${H200_PRS_K:-"TestExtraTensorChannels or test_fused_op_return_counts or test_linear_add_on_channel"}
  local top; top=$(git -C "$B" rev-parse HEAD)
  mkdir -p "$S/prs"; : > "$S/prs/commands.txt"
  "$PY" "$REPO/gpu/pr_chains.py" "$P/patches/series" > "$S/prs/chains.txt"
  "$PY" "$REPO/gpu/pr_chains.py" "$P/patches/series" --upto "${H200_SET_UPTO:-contract}" >> "$S/prs/chains.txt"
  local slug names tree
  while IFS=$'\t' read -r slug names; do
    case " ${H200_PRS:-fixes in-place contract} set " in *" $slug "*) ;; *) continue ;; esac
    tree=$S/prs/tree-$slug
    if [ ! -d "$tree" ]; then
      git -C "$FORK" worktree add -q --detach "$tree" "$top" || return 1
      local files=() n; for n in $names; do files+=("$P/patches/$n"); done
      git -C "$tree" -c user.name=h200 -c user.email=h200@localhost -c commit.cleanup=verbatim \
        am -q -3 "${files[@]}" \
        > "$LOG/prs-am-$slug.log" 2>&1 || { say "prs: $slug does not apply on its base"; return 1; }
      (cd "$FORK" && find . -name '*.so' -not -path './build/*' -not -path './3rdparty/*' -not -path './.git/*') |
        while read -r so; do mkdir -p "$tree/$(dirname "$so")"; ln -sfn "$FORK/${so#./}" "$tree/$so"; done
    fi
    echo "$slug: $(git -C "$tree" log --oneline -1) on $(git -C "$tree" log --oneline -1 "$top")" >> "$S/prs/trees.txt"
    local side pp
    for side in pr base; do
      if [ "$side" = base ]; then pp=$B:$SITE; else pp=$tree:$SITE; fi
      (cd "$RUN" && PYTHONPATH=$pp timeout "${H200_PRS_S:-300}" "$PY" -m pytest -q -p no:cacheprovider \
        -n 4 "$tree/tests/pytorch/test_fusible_ops.py" -k "$k" --junitxml="$S/prs/$slug-$side.xml" -rf \
        > "$LOG/prs-$slug-$side.log" 2>&1; echo "rc=$?" >> "$LOG/prs-$slug-$side.log") &
      echo "pytest $slug's test_fusible_ops.py -k '$k' (PYTHONPATH=$side)" >> "$S/prs/commands.txt"
    done
    wait
  done < "$S/prs/chains.txt"
  touch "$S/prs.done"
}

st_hostperf() {  # host wall time per step of bench/channels_bench.py on CUDA: a tree against the base
  local tree=${H200_PERF_TREE:-$FORK} out=$S/hostperf r=0 side pp t0=$SECONDS
  local budget=${H200_HOSTPERF_S:-240}
  mkdir -p "$out"; : > "$out/rounds.jsonl"
  say "hostperf: $tree against the base, ABBA rounds, budget $budget s"
  while [ $r -lt "${H200_HOSTPERF_ROUNDS:-6}" ] && [ $((SECONDS - t0 + 45)) -lt "$budget" ]; do
    local order="tree base"; [ $((r % 2)) -eq 1 ] && order="base tree"
    for side in $order; do
      if [ "$side" = base ]; then pp=$B:$SITE; else pp=$tree:$SITE; fi
      (cd "$RUN" && PYTHONPATH=$pp timeout 120 "$PY" "$REPO/bench/channels_bench.py" --device cuda \
        --steps "${H200_HOSTPERF_STEPS:-100}" --repeats 3) 2>> "$LOG/hostperf.log" |
        tail -n 1 | "$PY" -c "import json,sys; print(json.dumps({'side': sys.argv[1], 'round': int(sys.argv[2]), 'seconds': json.loads(sys.stdin.read())}))" "$side" $r >> "$out/rounds.jsonl"
    done
    r=$((r + 1))
  done
  touch "$S/hostperf.done"
}

st_overhead() {  # host time per step of gpu/hostperf.py's models: main and PR tips, paired
  # Trees: main is the base worktree ($B); each other tree is a PR tip that the prs stage
  # made ($S/prs/tree-SLUG). H200_OVERHEAD_TREES names the slugs; main-again (main once more)
  # is the null row. Every worker is pinned to CPU H200_OVERHEAD_CPU (3); blocks alternate.
  [ -f "$S/base.ok" ] || st_base || return 1
  local out=$S/overhead slug specs=("main=$B")
  for slug in ${H200_OVERHEAD_TREES:-contract channel-routing}; do
    [ -d "$S/prs/tree-$slug" ] || { say "overhead: no tree for $slug (run the prs stage with H200_PRS)"; return 1; }
    specs+=("$slug=$S/prs/tree-$slug")
  done
  specs+=("main-again=$B")
  mkdir -p "$out"; : > "$out/rounds.jsonl"
  say "overhead: ${specs[*]}, ${H200_OVERHEAD_ROUNDS:-30} rounds, budget ${H200_OVERHEAD_S:-420} s"
  "$PY" "$REPO/gpu/hostperf.py" run --device cuda --rounds "${H200_OVERHEAD_ROUNDS:-30}" \
    --steps "${H200_OVERHEAD_STEPS:-50}" --warmup 20 --budget-s "${H200_OVERHEAD_S:-420}" \
    --cpu "${H200_OVERHEAD_CPU:-3}" --out "$out/rounds.jsonl" --site "$SITE" --cwd "$RUN" "${specs[@]}" \
    > "$out/report.txt" 2>> "$LOG/overhead.log"
  touch "$S/overhead.done"
}

st_l0_base_blocks() {  # together: none is a timing
  st_l0_base & local a=$!
  st_blocks & local b=$!
  st_basetests & local c=$!
  wait $a; wait $b; wait $c
}

st_perf() {
  local budget; budget=$(( $(left) - 60 ))
  [ "$budget" -gt 300 ] && budget=300
  [ "$budget" -lt 40 ] && { say "perf: no time left ($budget s)"; return 0; }
  say "perf: budget $budget s"
  local out=$S/perf; mkdir -p "$out"
  local t0=$SECONDS
  # (a) the MoE example as it stands (fp32, paired blocks), then channels/caller with CUDA events
  (cd "$RUN" && PYTHONPATH=$(pyenv_patched) timeout 90 "$PY" "$REPO/examples/moe_channels.py") > "$out/moe_example.json" 2> "$LOG/perf-moe-example.log"
  (cd "$RUN" && PYTHONPATH=$(pyenv_patched) timeout 120 "$PY" "$REPO/gpu/perf.py" pair --label patched) > "$out/pair.json" 2> "$LOG/perf-pair.log"
  # (b) series against base: alternate processes, ABBA order, until the budget is spent
  local r=0 order
  : > "$out/series.jsonl"
  while [ $r -lt "${H200_PERF_ROUNDS:-8}" ] && [ $((SECONDS - t0 + 40)) -lt "$budget" ]; do
    if [ $((r % 2)) -eq 0 ]; then order="patched base"; else order="base patched"; fi
    for side in $order; do
      local pp; if [ "$side" = base ]; then pp=$(pyenv_base); else pp=$(pyenv_patched); fi
      (cd "$RUN" && PYTHONPATH=$pp timeout 90 "$PY" "$REPO/gpu/perf.py" series --label "$side" --round $r) >> "$out/series.jsonl" 2>> "$LOG/perf-series.log"
    done
    r=$((r + 1))
  done
  "$PY" "$REPO/gpu/perf.py" report --series "$out/series.jsonl" --pair "$out/pair.json" \
    --example "$out/moe_example.json" > "$out/report.txt" 2>> "$LOG/perf-series.log"
  # (c) in-place residual variants (bench/inplace_residual.py), if time is left
  if [ $((SECONDS - t0 + 30)) -lt "$budget" ]; then
    (cd "$RUN" && PYTHONPATH=$(pyenv_patched) timeout 60 "$PY" "$REPO/bench/inplace_residual.py") > "$out/inplace.json" 2> "$LOG/perf-inplace.log"
  fi
  touch "$S/perf.done"
}

summary() {
  {
    echo "# H200 run $(date -u +%Y-%m-%dT%H:%M:%SZ), elapsed $(elapsed) s since start"
    echo; echo "project: $(cat "$S/project.commit" 2>/dev/null)"; echo
    echo '```'; cat "$S/fork.log" 2>/dev/null; echo; cat "$S/base.log" 2>/dev/null
    grep -h "rc=\|done in\|^build" "$LOG/build.log" 2>/dev/null | tail -3
    cat "$S/pipeline.stages" 2>/dev/null
    echo '```'
    [ -s "$S/patches.diff" ] && { echo "WARNING: working tree patches differ from the project's:"; cat "$S/patches.diff"; }
    echo; echo "patches (sha256):"; echo '```'; cat "$S/patches.sha256" 2>/dev/null; echo '```'
    [ -f "$S/perf/report.txt" ] && { echo; echo "## perf"; echo '```'; cat "$S/perf/report.txt"; echo '```'; }
    for f in "$S"/blocks-*.jsonl; do [ -f "$f" ] && { echo; echo "## $(basename "$f")"; echo '```'; cat "$f"; echo '```'; }; done
  } > "$S/summary.md"
}

pipeline() {
  local stages=${*:-$STAGES_ALL} st
  : > "$S/pipeline.stages"
  for st in $stages; do
    echo "stage $st start $(elapsed) s" >> "$S/pipeline.stages"
    case $st in
      build) st_build ;; base) st_base ;; l0) st_l0 ;; l0-base) st_l0_base ;; blocks) st_blocks ;;
      l0-base+blocks) st_l0_base_blocks ;; perf) st_perf ;; basetests) st_basetests ;;
      prs) st_prs ;; hostperf) st_hostperf ;; overhead) st_overhead ;;
      rg) OUT= bash "$REPO/gpu/rg_cuda.sh" > "$LOG/rg.log" 2>&1 ;;
      *) say "unknown stage $st"; false ;;
    esac
    local rc=$?
    echo "stage $st rc=$rc at $(elapsed) s" >> "$S/pipeline.stages"
    if [ $rc -ne 0 ] && { [ "$st" = build ] || [ "$st" = base ]; }; then break; fi
  done
  summary
  echo "pipeline done at $(elapsed) s" >> "$S/pipeline.stages"
}

launch() {  # stages... -> under setsid, returns at once
  if p=$(pipeline_pid); then say "pipeline already running (pid $p)"; return 0; fi
  setsid nohup bash "$REPO/gpu/h200.sh" _pipeline "$@" > "$LOG/pipeline.log" 2>&1 < /dev/null &
  echo $! > "$S/pipeline.pid"
  say "pipeline started (pid $!): ${*:-$STAGES_ALL}; log $LOG/pipeline.log"
}

progress_line() {
  local st; st=$(grep "start" "$S/pipeline.stages" 2>/dev/null | tail -1 | cut -d' ' -f2)
  local extra=""
  case $st in
    build) local l; l=$(ls -t "$S"/tmp/*.log 2>/dev/null | head -1)
      [ -n "$l" ] && extra=$(grep -o '\[[0-9]*/[0-9]*\]' "$l" | tail -1) ;;
    l0) extra="$(grep -c " done " "$LOG/l0.log" 2>/dev/null) files done; running:"
      local f n
      for f in "$S"/l0/*.log; do
        [ -f "$f" ] || continue
        n=$(basename "$f" .log)
        grep -q "done $n.py" "$LOG/l0.log" 2>/dev/null && continue
        extra="$extra $n $(tail -c 400 "$f" | tr '\r' '\n' | grep -o '\[ *[0-9]*%\]' | tail -1);"
      done ;;
  esac
  echo "[$(elapsed) s] stage ${st:-none} $extra"
}

cmd_wait() {
  local secs=${1:-560}; [ "$secs" -gt 590 ] && secs=590
  local end=$((SECONDS + secs - 5))
  while [ $SECONDS -lt $end ] && pipeline_pid > /dev/null; do
    progress_line
    local n=0; while [ $n -lt 30 ] && [ $SECONDS -lt $end ] && pipeline_pid > /dev/null; do sleep 2; n=$((n + 2)); done
  done
  cmd_status
  cmd_collect
}

cmd_status() {
  echo "== state $S, elapsed $(elapsed) s of $DEADLINE_S"
  if p=$(pipeline_pid); then echo "pipeline running (pid $p)"; else echo "pipeline not running"; fi
  cat "$S/pipeline.stages" 2>/dev/null
  [ -f "$LOG/build.log" ] && { echo "-- build.log tail"; tail -n 5 "$LOG/build.log"; }
  [ -f "$LOG/l0.log" ] && { echo "-- l0.log tail"; tail -n 18 "$LOG/l0.log"; }
  [ -f "$S/l0-compare.md" ] && { echo "-- l0-compare"; head -n 25 "$S/l0-compare.md"; }
  for f in "$S"/blocks-*.jsonl; do [ -f "$f" ] && { echo "-- $(basename "$f")"; cut -c1-400 "$f"; }; done
  [ -f "$S/hostperf/rounds.jsonl" ] && { echo "-- hostperf rounds: $(wc -l < "$S/hostperf/rounds.jsonl")"; }
  for f in "$LOG"/basetests-*.log "$LOG"/prs-*.log; do [ -f "$f" ] && { echo "-- $(basename "$f")"; grep -E "^FAILED|^ERROR|passed|failed|rc=" "$f" | cut -c1-200 | tail -n 40; }; done
  [ -f "$S/perf/report.txt" ] && { echo "-- perf"; cat "$S/perf/report.txt"; }
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader 2>/dev/null
  return 0
}

cmd_collect() {
  local out=${OUT:-}
  [ -n "$out" ] || { say "collect: OUT is not set"; return 0; }
  mkdir -p "$out"
  summary
  cp "$S/summary.md" "$out/summary.md"
  [ -f "$S/l0-compare.md" ] && cp "$S/l0-compare.md" "$out/l0-compare.md"
  { cat "$S/l0/commands.txt" 2>/dev/null; echo; cat "$S/l0-rerun/commands.txt" 2>/dev/null
    echo; echo "# pytest $("$PY" -m pytest --version 2>&1 | head -1), xdist $("$PY" -c 'import xdist;print(xdist.__version__)' 2>/dev/null)"
  } > "$out/commands.txt"
  cat "$S"/blocks-*.jsonl > "$out/blocks.jsonl" 2>/dev/null
  [ -d "$S/perf" ] && "$PY" -c "
import json, pathlib, sys
d = pathlib.Path(sys.argv[1]); r = {}
for f in sorted(d.iterdir()):
    r[f.name] = f.read_text(errors='replace')[-200000:]
print(json.dumps(r, indent=1))" "$S/perf" > "$out/perf.json"
  # logs trimmed, junit xml and per-file pytest logs (tails) in one archive
  local t=$S/collect; rm -rf "$t"; mkdir -p "$t/logs" "$t/junit"
  for f in "$LOG"/*.log "$S"/l0/*.log "$S"/l0-rerun/*.log; do
    [ -f "$f" ] && tail -c 400000 "$f" > "$t/logs/$(basename "$(dirname "$f")")_$(basename "$f")"; done
  cp "$S"/l0/*.xml "$S"/l0-rerun/*.xml "$S"/l0/status.json "$t/junit/" 2>/dev/null
  cp "$S"/l0-rerun/*.ids "$S"/l0-rerun/*.absent.txt "$S"/basetests-*.xml "$S/basetests.commands" "$t/junit/" 2>/dev/null
  cp "$S"/prs/*.xml "$S"/prs/*.txt "$t/junit/" 2>/dev/null
  cp "$S"/hostperf/rounds.jsonl "$out/hostperf.jsonl" 2>/dev/null
  cp "$S"/overhead/rounds.jsonl "$out/overhead.jsonl" 2>/dev/null
  cp "$S"/overhead/report.txt "$out/overhead.txt" 2>/dev/null
  [ -d "$S/rg" ] && tar -cJf "$out/rg.tar.xz" -C "$S/rg" --exclude='tree-*' . 2>/dev/null
  tar -cJf "$out/logs.tar.xz" -C "$t" logs junit 2>/dev/null
  ls -la "$out"
}

case ${1:-status} in
  start) setup || exit 1; shift; launch "$@" ;;
  setup) setup ;;
  _pipeline) shift; echo $$ > "$S/pipeline.pid"; pipeline "$@" ;;
  wait) cmd_wait "${2:-560}" ;;
  status) cmd_status ;;
  collect) cmd_collect ;;
  build|base|l0|l0-base|blocks|perf|basetests|prs|hostperf|overhead|rg) setup || exit 1; launch "$1" ;;
  *) echo "usage: $0 start [STAGES]|setup|wait [S]|status|collect|build|base|l0|l0-base|blocks|perf" >&2; exit 2 ;;
esac
