#!/usr/bin/env bash
# Render a report's index.html in a real browser and check it (issue 15): Debian's
# Chromium, headless, loads the page from disk (no network, no server), and
#   * the page logs nothing to the console (no script error, no console.error),
#   * its script ran (it marks <body data-sortable="ready">),
#   * the recommendation table and the contents are in the rendered DOM,
#   * every figure and link it references beside it exists,
#   * a screenshot is written (reports/index.png) and is not blank.
# Installs chromium from Debian's packages when missing. Starts no service: each Chromium
# run exits by itself (a timeout stops a hung one).
# Usage: scripts/html-check.sh [reports-dir]
set -euo pipefail
dir=${1:-reports}
page="$dir/index.html"
[ -s "$page" ] || { echo "html-check: $page missing; run \`driftlab report --dir $dir\` first" >&2; exit 2; }

if ! command -v chromium >/dev/null 2>&1; then
  echo "html-check: installing chromium (Debian package)"
  "$(dirname "$0")/apt-install.sh" chromium
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
url="file://$(cd "$dir" && pwd)/index.html"
# The flags the machine's notes give for a closed network: no background connections.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000)

timeout 120 chromium "${flags[@]}" --window-size=1400,1000 \
  --screenshot="$dir/index.png" "$url" 2>"$profile/shot.log" >/dev/null || true
timeout 120 chromium "${flags[@]}" --dump-dom "$url" 2>"$profile/dom.log" >"$profile/dom.html" || true

fail=0
if grep -h "CONSOLE" "$profile/shot.log" "$profile/dom.log"; then
  echo "html-check: the page wrote to the console (above)" >&2; fail=1
fi
grep -q 'data-sortable="ready"' "$profile/dom.html" \
  || { echo "html-check: the table script did not run" >&2; fail=1; }
grep -q 'Recommendations per problem class' "$profile/dom.html" \
  || { echo "html-check: no recommendations section in the DOM" >&2; fail=1; }
grep -q '<th>recommended (step time)</th>' "$profile/dom.html" \
  || { echo "html-check: no recommendation table in the DOM" >&2; fail=1; }
grep -q '<nav><b>Contents</b>' "$profile/dom.html" \
  || { echo "html-check: no table of contents" >&2; fail=1; }
# Every file the page references beside it (figures, summaries) exists.
missing=0
while IFS= read -r ref; do
  [ -e "$dir/$ref" ] || { echo "html-check: missing $dir/$ref" >&2; missing=$((missing + 1)); }
done < <(grep -o '\(src\|href\)="[^"#][^"]*"' "$page" | sed 's/^[a-z]*="//; s/"$//' | grep -v '^[a-z]*:' | sort -u)
[ "$missing" -eq 0 ] || fail=1
# A blank page compresses to almost nothing; the rendered report is tens of kB.
size=$(stat -c %s "$dir/index.png" 2>/dev/null || echo 0)
[ "$size" -gt 20000 ] || { echo "html-check: screenshot $dir/index.png is $size bytes (blank?)" >&2; fail=1; }
figures=$(grep -o '<img ' "$page" | wc -l)
tables=$(grep -o '<table class="sortable"' "$page" | wc -l)
if [ "$fail" -ne 0 ]; then exit 1; fi
echo "html-check: $page renders in $(chromium --version 2>/dev/null | head -1): no console output, $tables sortable tables, $figures figures, screenshot $dir/index.png ($size bytes)"
