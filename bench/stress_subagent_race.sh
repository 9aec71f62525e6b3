#!/bin/sh
# Issue #27 deliverable 7: run the real-Hermes background delegate_task end-to-end test N times in a row
# (default 50) and count failures. Not part of the normal suite (each run starts the real hermes CLI).
cd "$(dirname "$0")/.." || exit 1
n=${1:-50}
fail=0
i=1
while [ "$i" -le "$n" ]; do
    if ! python -m pytest tests/hermes/test_bridge_e2e.py -q -x -p no:cacheprovider \
            -k test_background_subagent_is_nested_and_never_a_silent_orphan >/dev/null 2>&1; then
        fail=$((fail + 1))
        echo "run $i: FAILED"
    fi
    i=$((i + 1))
done
echo "$n runs, $fail failed"
[ "$fail" -eq 0 ]
