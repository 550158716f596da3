#!/usr/bin/env bash
# Installs Debian's PostgreSQL if needed, starts it on loopback and creates the `foundry` role.
set -euo pipefail

if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
    pg_createcluster "$version" main >/dev/null
fi
pg_ctlcluster "$version" main start 2>/dev/null || true
for _ in $(seq 30); do
    pg_isready -h 127.0.0.1 -q && break
    sleep 1
done
su postgres -c "psql -q -tc \"SELECT 1 FROM pg_roles WHERE rolname = 'foundry'\"" | grep -q 1 ||
    su postgres -c "psql -q -c \"CREATE ROLE foundry LOGIN SUPERUSER PASSWORD 'foundry'\""
echo "PostgreSQL $version is running on 127.0.0.1:5432"
