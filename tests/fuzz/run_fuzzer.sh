#!/usr/bin/env bash
# Runs one libFuzzer target of build-fuzz/ for a while from a fresh copy of its corpus files,
# as `make fuzz` does for each fuzzer: prints the last lines of its stats, and on a finding the
# crash lines, exiting with the fuzzer's status.
#
#   tests/fuzz/run_fuzzer.sh NAME SECONDS MAX_LEN "what it fuzzes" CORPUS_FILE...
#
# The log is build-fuzz/fuzz-NAME.log; a crashing input is written to build-fuzz/ (add it to
# tests/fuzz/regressions/ once fixed).
set -u
name=$1 seconds=$2 max_len=$3 what=$4
shift 4
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$@" "$corpus"/ 2>/dev/null
log=build-fuzz/fuzz-$name.log
echo "fuzzing $what for $seconds s"
./build-fuzz/tests/fuzz/$name "$corpus" -seed=1 -max_total_time="$seconds" -rss_limit_mb=2048 \
  -max_len="$max_len" -print_final_stats=1 -artifact_prefix=build-fuzz/ >"$log" 2>&1
status=$?
tail -4 "$log"
if [ $status -ne 0 ]; then
  echo "the fuzzer found a bug (full log: $log):"
  grep -E "runtime error|ERROR:|SUMMARY:|#[0-9]+ 0x|Test unit written" "$log" | head -30
fi
exit $status
