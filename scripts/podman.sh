# shellcheck shell=bash
# podman as this project runs it (source from the repo root; needs root):
#   podman_setup [SET]    provisions podman (scripts/ensure-tool.sh --set SET, default container) and
#                         exports CONTAINERS_CONF, a containers.conf under .tools/podman/ (never /etc)
#   minbase_rootfs FILE [PACKAGE,...]
#                         makes FILE, a Debian 12 minbase rootfs tarball (mmdebstrap), once
# Podman's settings here: runc with the cgroupfs manager (crun refuses hybrid cgroup layouts); the
# open files of this machine's hard limit, which podman cannot raise (no CAP_SYS_RESOURCE in a
# sandbox) and which HAProxy's maxconn needs; processes: 4096, as runc may not set the machine's own;
# netavark, whose aardvark-dns gives each Compose network the service names. Where the machine's hard
# limits are below podman's own default (1048576 open files and processes, which it sets for every
# rlimit a container does not name, e.g. nproc beside Compose's nofile), runc runs through
# .tools/podman/runc, which first lowers each such rlimit of the container to the hard limit.

podman_setup() {
  bash scripts/ensure-tool.sh --set "${1:-container}"
  local dir="$PWD/.tools/podman"
  mkdir -p "$dir"
  cp scripts/runc-clamped "$dir/runc"
  cat > "$dir/containers.conf.part" <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=4096:4096"]
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc-clamped"
events_logger = "file"
[engine.runtimes]
runc-clamped = ["$dir/runc"]
[network]
network_backend = "netavark"
EOF
  mv "$dir/containers.conf.part" "$dir/containers.conf"
  export CONTAINERS_CONF="$dir/containers.conf"
}

minbase_rootfs() {
  local file=$1 include=${2:-}
  [ -s "$file" ] && return 0
  echo "${me:-podman}: making a Debian 12 minbase rootfs with mmdebstrap (about a minute)..." >&2
  mkdir -p "$(dirname "$file")"
  mmdebstrap --quiet --format=tar --variant=minbase ${include:+--include="$include"} bookworm "$file.part" http://deb.debian.org/debian
  mv "$file.part" "$file"
}
