#!/usr/bin/env bash
# Long fuzzing runs of every target, one after the other, and a Markdown table of the
# executions and failures of each on stdout (libFuzzer's own output goes to
# $WORK/<target>.log).
#
#   fuzz/run_long.sh [SECONDS_PER_TARGET] [BUILD_DIR]
#
# SECONDS_PER_TARGET defaults to 600. BUILD_DIR is a CMake build folder of this project
# whose fuzz targets are built (`cmake --build BUILD_DIR --target ai_hwaccel_fuzzers`,
# which also writes the seed corpora); it defaults to ./build. Environment:
#   FUZZ_TARGETS  the targets to run (default: all of them)
#   FUZZ_WORK     where the grown corpora, logs and failing inputs go
#                 (default: BUILD_DIR/tests/fuzz/long); kept between runs, so a second
#                 run continues from what the first found
# Exit status: 0 when no target found anything, 1 otherwise.
set -u -o pipefail

seconds=${1:-600}
build=${2:-build}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/tests/fuzz"
work=${FUZZ_WORK:-$bin/long}
targets=${FUZZ_TARGETS:-capture parsers machine model_file registry_json disk_cache cli}

case "$seconds" in '' | *[!0-9]*) echo "run_long.sh: seconds must be a whole number" >&2; exit 2 ;; esac
for t in $targets; do
    if [ ! -x "$bin/fuzz_$t" ] || [ ! -d "$bin/corpus/$t" ]; then
        echo "run_long.sh: $bin/fuzz_$t or its corpus is missing; build the ai_hwaccel_fuzzers target first" >&2
        exit 2
    fi
done
mkdir -p "$work"

echo "| target | seconds | executions | exec/s | corpus (start → end) | coverage (edges) | crashes | leaks | timeouts / OOM | UB reports |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
status=0
for t in $targets; do
    corpus="$work/$t/corpus"
    artifacts="$work/$t/artifacts"
    log="$work/$t.log"
    mkdir -p "$corpus" "$artifacts"
    start_units=$(find "$corpus" "$bin/corpus/$t" -type f | wc -l)
    flags=()
    [ "$t" = cli ] && flags+=(-close_fd_mask=2) # the tool's own messages
    # New inputs go to the first folder; the seeds and the reproducers of bugs found
    # earlier are read only.
    dirs=("$corpus" "$bin/corpus/$t")
    [ -d "$here/regressions/$t" ] && dirs+=("$here/regressions/$t")
    "$bin/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=30 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "${flags[@]}" "${dirs[@]}" >"$log" 2>&1
    rc=$?
    execs=$(grep -h '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
    rate=$((execs / (seconds > 0 ? seconds : 1)))
    edges=$(grep -ho 'cov: [0-9]*' "$log" | awk '{print $2}' | sort -n | tail -1)
    end_units=$(find "$corpus" "$bin/corpus/$t" -type f | wc -l)
    crashes=$(find "$artifacts" -name 'crash-*' | wc -l)
    leaks=$(find "$artifacts" -name 'leak-*' | wc -l)
    slow=$(find "$artifacts" \( -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    ub=$(grep -c 'runtime error:' "$log")
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ] || [ "$leaks" -ne 0 ] || [ "$slow" -ne 0 ] || [ "$ub" -ne 0 ]; then
        status=1
    fi
    echo "| fuzz_$t | $seconds | $execs | $rate | $start_units → $end_units | ${edges:-?} | $crashes | $leaks | $slow | $ub |"
done
exit $status
