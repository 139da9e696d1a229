#!/usr/bin/env bash
# Run the sample gold set and gate its retrieval against the committed baseline.
#
# Exit code: the gate's own (0 pass, 1 regression, 2 bad input); any other non-zero code
# means the run itself failed. Outputs in $OUT: gate.md, gate.xml (JUnit), gate.json.
# When $GITHUB_STEP_SUMMARY is set (GitHub Actions) the Markdown is appended to it.
#
# Settings (environment variables):
#   RULEGAUGE   rulegauge executable                 (default: rulegauge)
#   RUNS_DIR  folder of runs; baselines below it  (default: runs)
#   BASELINE  baseline name or directory          (default: sample -> runs/baselines/sample)
#   POLICY    gate policy TOML                    (default: docs/ci/gate-policy.toml)
#   GOLDSET   gold set to run                     (default: goldsets/sample.yaml)
#   CONFIG    fusion grid TOML                    (default: empty = the built-in grid)
#   OUT       output folder                       (default: gate-out)
#   RUN_ID    id of the candidate run             (default: ci-<UTC time>)
set -euo pipefail

RULEGAUGE=${RULEGAUGE:-rulegauge}
RUNS_DIR=${RUNS_DIR:-runs}
BASELINE=${BASELINE:-sample}
POLICY=${POLICY:-docs/ci/gate-policy.toml}
GOLDSET=${GOLDSET:-goldsets/sample.yaml}
CONFIG=${CONFIG:-}
OUT=${OUT:-gate-out}
RUN_ID=${RUN_ID:-ci-$(date -u +%Y%m%d-%H%M%S)}

# models ship inside packages: nothing may be downloaded at run time
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p "$OUT"

run_args=(run --goldset "$GOLDSET" --out "$RUNS_DIR" --run-id "$RUN_ID")
if [[ -n "$CONFIG" ]]; then
  run_args+=(--config "$CONFIG")
fi
"$RULEGAUGE" "${run_args[@]}"

set +e
"$RULEGAUGE" gate --baseline "$BASELINE" --run "$RUN_ID" --policy "$POLICY" \
  --runs-dir "$RUNS_DIR" --markdown "$OUT/gate.md" --junit "$OUT/gate.xml" \
  --json-file "$OUT/gate.json"
status=$?
set -e

if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$OUT/gate.md" ]]; then
  cat "$OUT/gate.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
