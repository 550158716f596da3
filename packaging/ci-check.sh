#!/usr/bin/env bash
# For CI: runs packaging/check-linux.sh --build when the commit under test changed packaging/,
# resources/ or the lock (constraints.txt), and says so either way. Compares HEAD with
# FOUNDRY_CI_BASE (default HEAD~1, the first parent, so a merge counts every change it brings);
# runs the check when that commit is not in the clone (a shallow clone) rather than skip it
# blindly.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=${FOUNDRY_CI_BASE:-HEAD~1}
WATCHED=(packaging resources constraints.txt)

if ! git rev-parse -q --verify "$BASE^{commit}" >/dev/null; then
    echo "packaging: $BASE is not in this clone, so the packaged build is checked"
elif git diff --quiet "$BASE" HEAD -- "${WATCHED[@]}"; then
    echo "packaging: ${WATCHED[*]} unchanged since $BASE; packaged build not checked"
    exit 0
else
    echo "packaging: changed since $BASE:"
    git diff --name-only "$BASE" HEAD -- "${WATCHED[@]}" | sed 's/^/  /'
fi
SCREENSHOT=${SCREENSHOT:-build/packaged-app-xvfb.png} exec packaging/check-linux.sh --build
