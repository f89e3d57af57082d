#!/usr/bin/env bash
# Builds the SAND sandbox image "$SAND_SANDBOX_IMAGE" (default sand-sandbox) in two cached stages:
#   a. base  "$SAND_SANDBOX_IMAGE-base:<hash>": a minimal Debian (debootstrap minbase + python3 + imagemagick),
#            stripped and `docker import`ed. No image can be pulled here, so we make our own.
#   b. final "$SAND_SANDBOX_IMAGE:<hash>" and ":latest": the base + grainworker/ (the in-sandbox runtime
#            only: the CLI and client are sandclient/, the emulator sandemu/, neither goes in) + the Python deps
#            of deploy/sandbox/requirements.txt (installed on the host with pip --target) + the pip wheel of
#            deploy/sandbox/pip.txt (dependency installs run pip from it inside the image).
# Each stage is skipped when its hash tag exists, so a second run is a no-op.
#
#   deploy/sandbox-image.sh [build] [--force]   # build what is missing (--force: both stages anew)
#   deploy/sandbox-image.sh fetch               # same as build (the component interface's name)
#   deploy/sandbox-image.sh status              # one line; exit 0 if the current image exists, else 3
#
# Env: SAND_SANDBOX_IMAGE, SAND_SANDBOX_SUITE (bookworm), SAND_SANDBOX_MIRROR (default: read from
# this machine's apt sources), SAND_PYTHON (host python whose pip installs the deps).
source "$(dirname "$0")/lib.sh"

COMP=sandbox-image
LOG="$(logfile "$COMP")"
IMAGE="$SAND_SANDBOX_IMAGE"
BASE_REPO="${IMAGE}-base"
SUITE="${SAND_SANDBOX_SUITE:-bookworm}"
# imagemagick: its identify is what examples/image-pipeline's entry grain runs (paper §6.6)
BASE_PACKAGES="python3 imagemagick"
ARCH="$(dpkg --print-architecture)"
BUILD="$SAND_HOME/build/sandbox"
SANDBOX_DIR="deploy/sandbox"     # relative to $SAND_ROOT (hash_of works there)
WORKER_DIR="grainworker"         # the runtime package, all of it and nothing else of the repository
DOCKER_SOCK="${SAND_DOCKER_SOCK:-/var/run/docker.sock}"
export DOCKER_HOST="unix://$DOCKER_SOCK"
export DOCKER_BUILDKIT=0         # the 28.x client has no buildx here; the legacy builder is enough

# What the base keeps out: documentation, translations, package lists and caches, logs. Python's
# own .pyc files stay (a read-only sandbox could not write them, and they make imports fast).
STRIP_PATHS=(
  usr/share/man usr/share/info usr/share/locale usr/share/lintian usr/share/linda
  usr/share/bash-completion
  var/lib/apt/lists var/cache/apt var/cache/ldconfig var/log var/tmp tmp
)

# ---- helpers ------------------------------------------------------------------------------------

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }
image_size_mb() { docker image inspect -f '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1e6 }'; }

# apt_mirror <suite>: the URI of the first apt source (in apt's order) of type deb whose suite is
# exactly <suite>: the main Debian archive, not -security/-updates nor third-party repositories.
# Reads one-line ("deb [opts] URI suite comp...") and deb822 (.sources) files.
apt_mirror() {
  local suite="$1" f
  local -a files=()
  [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
  while IFS= read -r f; do files+=("$f"); done < <(
    find /etc/apt/sources.list.d -maxdepth 1 -type f \( -name '*.list' -o -name '*.sources' \) 2>/dev/null | LC_ALL=C sort)
  for f in "${files[@]}"; do
    case "$f" in
      *.sources)
        # deb822: stanzas separated by blank lines; "Key: value", continuation lines indented.
        awk -v want="$suite" '
          function flush() {
            gsub(/[ \t]+/, " ", types); gsub(/[ \t]+/, " ", suites)
            if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no" && (" " suites " ") ~ (" " want " "))
              { split(uris, u, " "); if (u[1] != "") print u[1] }
            types = ""; uris = ""; suites = ""; enabled = ""; key = ""
          }
          /^#/ { next }
          /^[ \t]*$/ { flush(); next }
          /^[ \t]/ { v = $0; gsub(/^[ \t]+|[ \t]+$/, "", v)
                     if (key == "types") types = types " " v; else if (key == "uris") uris = uris " " v
                     else if (key == "suites") suites = suites " " v; next }
          { i = index($0, ":"); key = tolower(substr($0, 1, i - 1)); v = substr($0, i + 1)
            gsub(/^[ \t]+|[ \t]+$/, "", v)
            if (key == "types") types = v; else if (key == "uris") uris = v
            else if (key == "suites") suites = v; else if (key == "enabled") enabled = v }
          END { flush() }' "$f"
        ;;
      *)
        awk -v want="$suite" '
          { sub(/#.*/, "") }
          $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            if ($(i + 1) == want) print $i
          }' "$f"
        ;;
    esac
  done | grep -E '^(https?|ftp|file):' | head -n 1 || true
}

# unmount_under <dir>: anything a failed debootstrap left mounted in the rootfs (proc, sys, ...),
# deepest first, so that rm -rf cannot reach into the host's /proc or /sys.
unmount_under() {
  local m
  awk -v d="$1/" 'index($2 "/", d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
}

cleanup_work() {
  if [ -n "${WORK:-}" ] && [ -d "$WORK" ]; then
    unmount_under "$WORK"
    rm -rf --one-file-system "$WORK"
  fi
  if [ -n "${CTX:-}" ]; then rm -rf "$CTX"; fi
}
trap cleanup_work EXIT

# remove_old_tags <repo> <keep...>: drop tags of earlier builds (fails quietly for an image that a
# container still uses), so rebuilds do not pile up images.
remove_old_tags() {
  local repo="$1" tag keep; shift
  while read -r tag; do
    if [ -z "$tag" ] || [ "$tag" = "<none>" ]; then continue; fi
    for keep in "$@"; do [ "$tag" = "$keep" ] && continue 2; done
    docker rmi "$repo:$tag" >>"$LOG" 2>&1 || true
  done < <(docker images --format '{{.Tag}}' "$repo" 2>/dev/null)
}

# host_python: the project's Python (its venv if there is one) whose pip installs the deps.
host_python() {
  if [ -n "${SAND_PYTHON:-}" ]; then echo "$SAND_PYTHON"
  elif [ -x "$SAND_VENV/bin/python" ]; then echo "$SAND_VENV/bin/python"
  else command -v python3 || die "$COMP" - "no python3 on PATH (set SAND_PYTHON)"
  fi
}

# ---- stage a: the base --------------------------------------------------------------------------

strip_rootfs() {
  local root="$1" p
  for p in "${STRIP_PATHS[@]}"; do
    if [ -d "$root/$p" ]; then find "$root/$p" -mindepth 1 -delete; fi
  done
  # Docs go, except each package's copyright file (the licence terms travel with the binaries).
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  find "$root/var/lib/dpkg" "$root/var/cache/debconf" -maxdepth 1 -name '*-old' -delete
  rm -f "$root/etc/apt/sources.list"            # names the build host's mirror; no use inside
  # docker mounts /dev and its own hosts/hostname/resolv.conf; keep empty files as mount points.
  find "$root/dev" -mindepth 1 -delete
  : >"$root/etc/hostname"; : >"$root/etc/resolv.conf"; : >"$root/etc/hosts"
  rm -f "$root/etc/machine-id"
}

build_base() {
  local tag="$1" mirror root pyver size
  mirror="${SAND_SANDBOX_MIRROR:-$(apt_mirror "$SUITE")}"
  [ -n "$mirror" ] || die "$COMP" - "no apt source for suite '$SUITE' in /etc/apt/sources.list{,.d/*.list,.d/*.sources}; set SAND_SANDBOX_MIRROR"
  command -v debootstrap >/dev/null || die "$COMP" - "debootstrap not installed (apt-get install debootstrap)"

  mkdir -p "$BUILD"
  WORK="$(mktemp -d "$BUILD/base.XXXXXX")"
  root="$WORK/rootfs"
  progress "Sandbox base: debootstrap $SUITE (minbase + $BASE_PACKAGES) from the host's apt mirror, takes minutes"
  debootstrap --variant=minbase --arch="$ARCH" --include="${BASE_PACKAGES// /,}" \
    "$SUITE" "$root" "$mirror" >>"$LOG" 2>&1 \
    || die "$COMP" "$LOG" "debootstrap of $SUITE from $mirror failed"
  done_step

  progress "Sandbox base: stripping the root file system"
  strip_rootfs "$root"
  pyver="$(readlink "$root/usr/bin/python3" | sed -n 's/^python\([0-9]*\.[0-9]*\)$/\1/p')"
  [ -n "$pyver" ] || die "$COMP" "$LOG" "no python3 in the debootstrapped root file system"
  size="$(du -sm "$root" | cut -f1)"
  done_step
  echo "    root file system: ${size} MB, python $pyver"

  progress "Sandbox base: docker import $tag"
  tar --numeric-owner -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL org.sand.component=sandbox-base org.sand.python=$pyver org.sand.suite=$SUITE" \
    --change 'CMD ["python3"]' \
    - "$tag" >>"$LOG" 2>&1 || die "$COMP" "$LOG" "docker import of the base failed"
  done_step
  cleanup_work
  remove_old_tags "$BASE_REPO" "${tag##*:}"
}

# ---- stage b: the final image -------------------------------------------------------------------

# pydeps_dir <python>: the requirements installed with pip --target, cached by the content of
# requirements.txt and the host python's version/ABI (only a change there reruns pip).
pydeps_dir() {
  local py="$1" key dir tmp
  key="$( { cat "$SAND_ROOT/$SANDBOX_DIR/requirements.txt"
            "$py" -c 'import sys, sysconfig; print(sys.version, sysconfig.get_config_var("EXT_SUFFIX"))'
          } | sha256sum | cut -c1-16)"
  dir="$BUILD/pydeps-$key"
  if [ ! -d "$dir" ]; then
    progress "Sandbox image: pip install --target (requirements.txt) with $py" >&2
    tmp="$BUILD/pydeps-tmp.$$"
    rm -rf "$tmp"
    "$py" -m pip install --quiet --disable-pip-version-check --no-compile --no-warn-script-location \
      --target "$tmp" -r "$SAND_ROOT/$SANDBOX_DIR/requirements.txt" >>"$LOG" 2>&1 \
      || { rm -rf "$tmp"; die "$COMP" "$LOG" "pip install of $SANDBOX_DIR/requirements.txt failed"; }
    rm -rf "${tmp:?}/bin"   # console scripts would point at the host's python
    find "$BUILD" -maxdepth 1 -name 'pydeps-*' ! -name "pydeps-tmp.$$" -exec rm -rf {} +
    mv "$tmp" "$dir"
    done_step >&2
  fi
  echo "$dir"
}

# pip_wheel_dir <python>: the pip wheel of deploy/sandbox/pip.txt (for dependency installs in the image),
# cached by the content of pip.txt.
pip_wheel_dir() {
  local py="$1" key dir tmp
  key="$(sha256sum "$SAND_ROOT/$SANDBOX_DIR/pip.txt" | cut -c1-16)"
  dir="$BUILD/pipwheel-$key"
  if [ ! -d "$dir" ]; then
    progress "Sandbox image: pip download (pip.txt) with $py" >&2
    tmp="$BUILD/pipwheel-tmp.$$"
    rm -rf "$tmp"
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: -d "$tmp" \
      -r "$SAND_ROOT/$SANDBOX_DIR/pip.txt" >>"$LOG" 2>&1 \
      || { rm -rf "$tmp"; die "$COMP" "$LOG" "pip download of $SANDBOX_DIR/pip.txt failed"; }
    find "$BUILD" -maxdepth 1 -name 'pipwheel-*' ! -name "pipwheel-tmp.$$" -exec rm -rf {} +
    mv "$tmp" "$dir"
    done_step >&2
  fi
  echo "$dir"
}

build_final() {
  local base="$1" tag="$2" force="$3" py host_ver img_ver deps pipwheel ctx
  py="$(host_python)"
  host_ver="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
    || die "$COMP" - "cannot run $py"
  img_ver="$(docker image inspect -f '{{index .Config.Labels "org.sand.python"}}' "$base")"
  [ "$host_ver" = "$img_ver" ] || die "$COMP" - "host python $py is $host_ver but the image's python3 is $img_ver: \
the deps (C extensions, .pyc) must match; set SAND_PYTHON to a python$img_ver"

  deps="$(pydeps_dir "$py")"
  pipwheel="$(pip_wheel_dir "$py")"
  progress "Sandbox image: docker build $tag"
  ctx="$BUILD/context"
  CTX="$ctx"   # removed on exit, also when the build fails
  rm -rf "$ctx"
  mkdir -p "$ctx/lib" "$ctx/pip"
  cp "$SAND_ROOT/$SANDBOX_DIR/Dockerfile" "$ctx/Dockerfile"
  cp -a "$deps/." "$ctx/lib/"
  cp "$pipwheel"/*.whl "$ctx/pip/"
  tar -C "$SAND_ROOT" --exclude=__pycache__ --exclude='*.pyc' -c "$WORKER_DIR" | tar -C "$ctx/lib" -x
  local -a opts=()
  [ "$force" = 1 ] && opts+=(--no-cache)
  # --network none: nothing to fetch, and no dependency on the docker0 bridge being healthy.
  docker build "${opts[@]}" --force-rm --network none --build-arg "BASE=$base" \
    --label org.sand.component=sandbox --label "org.sand.base=$base" \
    -t "$tag" -t "$IMAGE:latest" "$ctx" >>"$LOG" 2>&1 \
    || die "$COMP" "$LOG" "docker build of $tag failed"
  rm -rf "$ctx"
  done_step
  remove_old_tags "$IMAGE" "${tag##*:}" latest
}

# ---- tags -----------------------------------------------------------------------------------------

# The base's hash covers its inputs: suite, architecture, package list, strip list and the code
# that builds it (not the mirror: any mirror of the suite gives the same system).
base_tag() {
  local h
  h="$( { echo "$SUITE $ARCH $BASE_PACKAGES"; echo "${STRIP_PATHS[*]}"
          declare -f build_base strip_rootfs; } | sha256sum | cut -c1-16)"
  echo "$BASE_REPO:$h"
}

# The final image's hash: grainworker/ (what the image carries of the repository), requirements.txt,
# Dockerfile, the base and this stage's code.
final_tag() {
  local base="$1" h
  # grainworker/_gen is generated from the IDLs: hash them rather than the generated files.
  h="$( { hash_of "$WORKER_DIR" localbus/localbus.thrift datalayer/datalayer.thrift contracts/rules.json contracts/asl.json "$SANDBOX_DIR/requirements.txt" "$SANDBOX_DIR/Dockerfile" "$SANDBOX_DIR/pip.txt"
          echo "$base"; declare -f build_final pydeps_dir pip_wheel_dir; } | sha256sum | cut -c1-16)"
  echo "$IMAGE:$h"
}

require_docker() {
  [ "$(curl -fsS --max-time 5 --unix-socket "$DOCKER_SOCK" http://localhost/_ping 2>/dev/null)" = "OK" ] \
    || die "$COMP" - "Docker Engine does not answer on $DOCKER_SOCK (run deploy/docker.sh start)"
}

# ---- commands -----------------------------------------------------------------------------------

cmd_build() {
  local force="$1" t0 base final
  t0="$(now)"
  require_docker
  mkdir -p "$BUILD"
  # One build at a time (a second caller waits, then finds everything built).
  exec 9>"$BUILD/.lock"
  flock -w 1800 9 || die "$COMP" - "another sandbox-image build holds $BUILD/.lock for 30 min"
  : >"$LOG"

  base="$(base_tag)"
  final="$(final_tag "$base")"
  # --force moves existing tags to new images: remember the old ones so they do not linger untagged.
  local old_base="" old_final=""
  if [ "$force" = 1 ]; then
    old_base="$(docker image inspect -f '{{.Id}}' "$base" 2>/dev/null || true)"
    old_final="$(docker image inspect -f '{{.Id}}' "$final" 2>/dev/null || true)"
  fi
  if [ "$force" = 1 ] || ! image_exists "$base"; then
    build_base "$base"
  fi
  if [ "$force" = 1 ] || ! image_exists "$final"; then
    build_final "$base" "$final" "$force"
  else
    docker tag "$final" "$IMAGE:latest"   # e.g. after a revert: latest follows the inputs
  fi
  local id keep
  keep="$(docker image inspect -f '{{.Id}}' "$final" "$base" | tr '\n' ' ')"
  for id in $old_final $old_base; do   # final first: it holds the old base as its parent
    case " $keep " in *" $id "*) continue ;; esac
    docker rmi "$id" >>"$LOG" 2>&1 || true
  done
  echo "    sandbox image: $final = $IMAGE:latest ($(image_size_mb "$final"), base $base; $(since "$t0"))"
}

cmd_status() {
  local base final
  if ! [ "$(curl -fsS --max-time 5 --unix-socket "$DOCKER_SOCK" http://localhost/_ping 2>/dev/null)" = "OK" ]; then
    echo "$COMP  unknown  (docker not answering)"; return 3
  fi
  base="$(base_tag)"; final="$(final_tag "$base")"
  if image_exists "$final"; then
    echo "$COMP  built  $final  $(image_size_mb "$final")"
    return 0
  fi
  echo "$COMP  missing  $final (run deploy/sandbox-image.sh)"
  return 3
}

FORCE=0
CMD=build
for arg in "$@"; do
  case "$arg" in
    --force|-f) FORCE=1 ;;
    build|fetch|start) CMD=build ;;
    status) CMD=status ;;
    stop) CMD=stop ;;
    ready) CMD=ready ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "usage: $0 [build|status] [--force]" >&2; exit 2 ;;
  esac
done
case "$CMD" in
  build) cmd_build "$FORCE" ;;
  status) cmd_status ;;
  ready) cmd_status >/dev/null ;;
  stop) : ;;   # nothing runs: an image is not a process
esac
