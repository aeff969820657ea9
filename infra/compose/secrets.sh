#!/usr/bin/env bash
# Writes the secrets compose.yaml reads into ./secrets/ (the folder 700, each file 644: compose bind-mounts a secret file with its own mode, and the services run as uid 10001), keeping any that exist:
#   bash infra/compose/secrets.sh
# Replace a file with your own value at any time; the services read them at start (NAME_FILE variables).
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/secrets"
mkdir -p "$dir" && chmod 700 "$dir"
random() { head -c 32 /dev/urandom | base64 | tr -d '/+=\n' | head -c 40; }
put() { # name value
  [ -s "$dir/$1" ] && return 0
  printf '%s' "$2" > "$dir/$1" && chmod 644 "$dir/$1" && echo "wrote secrets/$1"
}
put postgres_password "$(random)"
put database_url "postgres://tollgate:$(cat "$dir/postgres_password")@postgres:5432/tollgate"
put admin_token "$(random)"
put metrics_token "$(random)"
put cursor_secret "$(random)"
put providers_token "$(random)"
put upstream_credentials "http://sample-providers:3100=$(cat "$dir/providers_token")"
