#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine: the packages listed in scripts/deps/.
# Safe to run again: it installs only what is missing. Needs root for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

read_list() { grep -v '^\s*#' "$1" | sed 's/\s*#.*//' | awk 'NF { print $1 }'; }

missing=()
while read -r package; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done < <(read_list scripts/deps/debian.txt)

if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "install-deps: missing Debian packages: ${missing[*]}; run this script as root" >&2
        exit 1
    fi
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python_missing=()
while read -r package; do
    python3 -m pip show -q "$package" >/dev/null 2>&1 || python_missing+=("$package")
done < <(read_list scripts/deps/python.txt)

if ((${#python_missing[@]})); then
    echo "install-deps: installing Python packages ${python_missing[*]}"
    python3 -m pip install -q --disable-pip-version-check "${python_missing[@]}"
fi
echo "install-deps: all dependencies present"
