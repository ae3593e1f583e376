#!/usr/bin/env bash
# Debian packages the gateway uses when present: espeak-ng, the offline speech engine of the local speech model
# (`local/espeak-speech`, and the spoken test audio of the tests), and pocketsphinx with its US English model, the
# offline recognizer of `local/pocketsphinx-transcribe`. Installed with apt when missing and apt is usable (root,
# or passwordless sudo); otherwise the gateway runs without them and says so (those models answer 503).
# Sourced by scripts/start.sh and scripts/test.sh; safe to run again (it installs only what is missing).
gw_install_system_packages() {
  local missing=()
  command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
  command -v pocketsphinx_continuous >/dev/null 2>&1 || missing+=(pocketsphinx)
  [ -d /usr/share/pocketsphinx/model/en-us ] || missing+=(pocketsphinx-en-us)
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || { echo "system packages: ${missing[*]} missing and no apt-get; the local speech and recognition models stay unavailable" >&2; return 0; }
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if sudo -n true 2>/dev/null; then sudo=(sudo -n); else echo "system packages: ${missing[*]} missing; install them as root (apt-get install -y ${missing[*]})" >&2; return 0; fi
  fi
  echo "system packages: installing ${missing[*]}" >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
    && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || echo "system packages: installing ${missing[*]} failed; the local speech and recognition models stay unavailable" >&2
}
gw_install_system_packages
