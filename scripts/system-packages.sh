#!/usr/bin/env bash
# Debian packages the project uses when present: chromium, the browser the console's tests drive headless
# (through playwright-core, which downloads no browser of its own). Installed with apt when missing and apt is
# usable (root, or passwordless sudo); otherwise the console's browser tests are skipped and say why.
# Sourced by scripts/test.sh; safe to run again (it installs only what is missing).
gw_install_system_packages() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || { echo "system packages: ${missing[*]} missing and no apt-get; the console's browser tests are skipped (under CI they fail)" >&2; return 0; }
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then sudo=(sudo -n); else echo "system packages: ${missing[*]} missing; install them as root (apt-get install -y ${missing[*]})" >&2; return 0; fi
  fi
  echo "system packages: installing ${missing[*]}" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
    && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || echo "system packages: installing ${missing[*]} failed; the console's browser tests are skipped (under CI they fail)" >&2
}
gw_install_system_packages
