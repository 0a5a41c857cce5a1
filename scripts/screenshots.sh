#!/usr/bin/env bash
# The README's pictures (issue 43): `topospread ui` over a 5,000-node dump and over
# tests/rebalance/full-zone.yaml, and the `-o html` pages, shot by headless Chromium
# into docs/. Needs chromium, python3 and a built target/debug/topospread.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/debug/topospread
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
# The browser test's dump: 5,000 nodes, 10,000 bound pods, a 300-replica Deployment.
"$bin" bench load --nodes 5000 --pods 10000 --dir "$tmp/dump" >/dev/null

shoot() { # FILE URL WIDTH HEIGHT
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=120000 \
    --window-size="$3,$4" --screenshot="$1" "$2" 2>/dev/null
}
serve() { # PORT FILE...
  local port=$1
  shift
  "$bin" ui --port "$port" "${@/#/-f=}" 2>"$tmp/ui-$port.log" &
  for _ in $(seq 1 600); do
    grep -q "http://" "$tmp/ui-$port.log" 2>/dev/null && return
    sleep 0.5
  done
  echo "ui on $port did not start" >&2
  exit 1
}

dump=("$tmp"/dump/*.json "$tmp"/dump/*.yaml)
serve 10281 "${dump[@]}"
base=http://127.0.0.1:10281/
pod=$(curl -s "${base}api/simulation" | python3 -c 'import json,sys; p=json.load(sys.stdin)["pods"][0]; print(p["namespace"]+"%2F"+p["pod"])')
# A third of the dump's services marked, so the heatmap's cells differ.
sel=$(python3 -c 'import urllib.parse; print(urllib.parse.quote("app in (" + ",".join(f"svc-{i}" for i in range(0, 1000, 3)) + ")"))')
shoot docs/ui-domains.png "$base?selector=$sel" 1400 1000
shoot docs/ui-pod.png "$base?view=pods&pod=$pod" 1400 1000
whatif=$(python3 -c 'import urllib.parse; print(urllib.parse.quote("{\"lose\":[\"topology.kubernetes.io/zone=eu-west-1a\"]}"))')
shoot docs/ui-whatif.png "$base?view=whatif&whatif=$whatif" 1400 900
serve 10282 tests/rebalance/full-zone.yaml
shoot docs/ui-rebalance.png "http://127.0.0.1:10282/?view=rebalance" 1400 900

"$bin" simulate "${dump[@]/#/-f=}" -o html >"$tmp/simulate.html" || true
shoot docs/html-simulate.png "file://$tmp/simulate.html" 1400 1400
"$bin" rebalance -f tests/rebalance/full-zone.yaml -o html >"$tmp/rebalance.html"
shoot docs/html-rebalance.png "file://$tmp/rebalance.html" 1400 1000
