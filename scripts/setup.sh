#!/usr/bin/env bash
# Prepares a fresh Debian/Ubuntu machine, with or without a GPU, and installs the app into .venv:
#   - a Vulkan driver: Mesa's lavapipe (software) as the fallback when there is no GPU,
#   - Xvfb, a virtual display for the window tests, and xdotool, which drives the window there,
#   - fonts-wqy-microhei (1.6 MB), a font with CJK glyphs: the UI merges it in for names in those
#     scripts (docs/formats.md, "Names in other scripts"), and the tests check that it does,
#   - chromium (Debian's, without its recommends: 25 packages, ~120 MB), the browser that the tests
#     of --serve drive through Playwright (tests/test_serve_browser.py); nothing is downloaded then,
#   - the Python packages (slangpy, imgui-bundle, numpy, pyglm, tqdm; pytest, ruff and Playwright for
#     the tests, with tensorboardX and TensorBoard's reader; Ray Tune and Optuna for sweeps; aiohttp
#     and simplejpeg for --serve).
# The system packages install beside the Python ones (apt and pip each wait on the network and the
# disk). Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
# apt-get waits for another one's lock (python3-venv below, beside the system packages) instead of failing.
apt_get() { sudo_if_needed apt-get -o DPkg::Lock::Timeout=600 "$@"; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

# Empty when the package is not installed (dpkg-query fails then: not an error here).
mesa_major() { { dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true; } | sed -E 's/^([0-9]+:)?([0-9]+).*/\2/'; }

install_system_packages() {
    command -v apt-get >/dev/null || { echo "setup: no apt-get; install a Vulkan driver and Xvfb yourself" >&2; return 0; }
    local needed=(xvfb xauth xdotool libvulkan1 fonts-wqy-microhei)
    local missing=() pkg
    for pkg in "${needed[@]}"; do installed "$pkg" || missing+=("$pkg"); done
    # SlangPy needs VK_KHR_shader_non_semantic_info, which lavapipe has from Mesa 23 on.
    local mesa; mesa=$(mesa_major); local mesa_ok=0; [ -n "$mesa" ] && [ "$mesa" -ge 23 ] && mesa_ok=1
    local browser=0; installed chromium || browser=1
    [ "${#missing[@]}" -gt 0 ] || [ "$mesa_ok" -eq 0 ] || [ "$browser" -eq 1 ] || return 0
    echo "setup: installing system packages (apt)"
    . /etc/os-release
    export DEBIAN_FRONTEND=noninteractive
    local backports=()
    if [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ]; then
        # Debian 12 ships Mesa 22.3; bookworm-backports has Mesa 25.
        if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
            printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                | sudo_if_needed tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
        fi
        backports=(-t bookworm-backports)
    fi
    apt_get update -qq
    [ "$mesa_ok" -eq 1 ] || apt_get install -y -qq "${backports[@]}" mesa-vulkan-drivers >/dev/null
    [ "${#missing[@]}" -eq 0 ] || apt_get install -y -qq "${missing[@]}" >/dev/null
    # Its recommends would bring 105 packages more (CUPS, Avahi, Samba's libraries, Perl): 69 s against 31 s.
    [ "$browser" -eq 0 ] || apt_get install -y -qq --no-install-recommends chromium >/dev/null
}

# The packages are installed again only when pyproject.toml or the Python changed since the last
# set-up: a launch on a ready machine runs no pip at all and prints one line.
stamp() { { cat pyproject.toml; .venv/bin/python -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16; }

install_python_packages() {
    local python=${PYTHON:-python3}
    if [ ! -x .venv/bin/python ]; then
        "$python" -m venv .venv 2>/dev/null || {
            apt_get install -y -qq python3-venv >/dev/null && "$python" -m venv .venv; }
    fi
    if [ -f .venv/.setup-stamp ] && [ "$(cat .venv/.setup-stamp)" = "$(stamp)" ] \
        && .venv/bin/python -c 'import slang_visual_trainer, slangpy, imgui_bundle, numpy, glm, tqdm, pytest, ray, optuna, tensorboardX, tensorboard, aiohttp, simplejpeg, playwright, igl, skimage' 2>/dev/null; then
        return 0
    fi
    echo "setup: installing the Python packages into .venv (once)"
    .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
    # The filter drops setuptools' notice that an editable install links to this folder (what it
    # is for); every other warning still shows.
    PYTHONWARNINGS="ignore:Editable installation:UserWarning" \
        .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,sweep,serve,mesh]"
    stamp > .venv/.setup-stamp
}

# Side by side; each one's exit status is checked (set -e does not reach into a background job).
install_system_packages &
system=$!
install_python_packages &
python=$!
status=0
wait "$system" || { echo "setup: installing the system packages failed" >&2; status=1; }
wait "$python" || { echo "setup: installing the Python packages failed" >&2; status=1; }
[ "$status" -eq 0 ] || exit 1
echo "setup: ready ($(.venv/bin/python -c 'import slangpy; print("slangpy", slangpy.__version__)' 2>/dev/null || echo 'slangpy installed'))"
