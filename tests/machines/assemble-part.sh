#!/usr/bin/env bash
# Assembles the machines of one part file only, for working on it:
#   tests/machines/assemble-part.sh parts/<name>.sh [PATH/TO/fixtures/real]
# writes them next to the others in tests/machines (each part touches only its machines).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
part=$1
real=${2:-$here/../../../shared/fixtures/real}
[ -d "$real" ] || { echo "no captures at $real" >&2; exit 1; }
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=/dev/null
. "$here/$part"
