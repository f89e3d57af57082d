#!/usr/bin/env bash
# make lint's check of deploy/prometheus: the rules with promtool, and the sample prometheus.yml (with its rules)
# in a scratch copy holding a stand-in admin key (promtool checks that the credentials file exists), and the
# dashboard's JSON. promtool comes with Debian's prometheus package (deploy/install.sh installs it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v promtool >/dev/null || { echo "Error: promtool not found; run deploy/install.sh (it installs prometheus)" >&2; exit 1; }
promtool check rules "$here/rules.yml"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp "$here/prometheus.yml" "$here/rules.yml" "$scratch/"
echo "stand-in" >"$scratch/admin-key"
promtool check config "$scratch/prometheus.yml"
python3 -m json.tool "$here/../grafana/sand.json" >/dev/null && echo "deploy/grafana/sand.json: valid JSON"
