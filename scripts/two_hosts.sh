#!/usr/bin/env bash
# two_hosts.sh: two "hosts", A and B, on one machine, for the tests and
# benchmarks that run clanorb across hosts.
#
#   two_hosts.sh up     [PREFIX]             make the hosts (nothing to do if they exist)
#   two_hosts.sh down   [PREFIX]             remove them, their processes and files (safe twice)
#   two_hosts.sh exec   A|B [PREFIX] -- CMD  run CMD inside a host (same pid: signals reach CMD)
#   two_hosts.sh addr   A|B [PREFIX]         print the host's address
#   two_hosts.sh netns  A|B [PREFIX]         print the host's network namespace file (for setns)
#   two_hosts.sh status [PREFIX]             what exists, for every prefix or one
#
# Each host is a network namespace (`ip netns`), joined to the other by a veth
# pair with addresses 10.77.N.1/24 (A) and 10.77.N.2/24 (B), where N is the
# lowest subnet number no other prefix holds, so that hosts of several
# prefixes live side by side. Each host also has a persistent mount namespace
# and UTS namespace (files bound under /run/clanorb-hosts/PREFIX/, a private
# bind mount) with
#   - private tmpfs mounts on /tmp and /dev/shm: the processes of one host
#     share them, and nothing passes to the other host or the real one;
#   - an identity of its own: a fresh boot id bound over
#     /proc/sys/kernel/random/boot_id (clanorb decides "same host" by the boot
#     id) and the host name PREFIX-a or PREFIX-b.
# Everything else (the file system outside /tmp and /dev/shm, the pid space)
# is the real host's, so results and programs are reached by their usual
# paths; so is this repository's tree when it lies under /tmp.
#
# Making namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN), `ip`
# (iproute2), `nsenter` and `unshare` (util-linux). Without them every command
# but status exits with status 2 and one line saying what is missing; it
# never skips silently. PREFIX: lower-case letters, digits and '-', at most 24
# characters; default clanorb.
set -Eeuo pipefail

readonly PROG=two_hosts.sh
readonly RUN_ROOT=/run/clanorb-hosts
readonly NET_PREFIX=10.77
readonly LINK=hostlink
readonly BOOT_ID=/proc/sys/kernel/random/boot_id
# The repository's tree (programs, build trees, results) stays visible in
# the hosts even where it lies under /tmp, which each host replaces.
TREE=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd -P)
readonly TREE

usage() {
  sed -n '4,10s/^# \{0,1\}//p' "$0" >&2
  exit 2
}

cannot() {  # cannot REASON: the one line a machine without namespaces gets
  echo "$PROG: cannot make two hosts: $*" >&2
  exit 2
}

fail() {
  echo "$PROG: $*" >&2
  exit 1
}

has_cap() {  # has_cap BIT: the capability is in this process's effective set
  local eff
  eff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
  (((0x$eff >> $1) & 1))
}

preflight() {
  local missing=() c
  for c in ip nsenter unshare mount umount findmnt flock awk; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
  done
  ((${#missing[@]} == 0)) || cannot "missing command(s): ${missing[*]} (iproute2, util-linux)"
  [ -e /proc/self/ns/net ] && [ -e /proc/self/ns/mnt ] && [ -e /proc/self/ns/uts ] ||
    cannot "the kernel has no network, mount or UTS namespaces (/proc/self/ns)"
  local lack=()
  has_cap 21 || lack+=(CAP_SYS_ADMIN)
  has_cap 12 || lack+=(CAP_NET_ADMIN)
  ((${#lack[@]} == 0)) || cannot "network and mount namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN);" \
    "this process (uid $(id -u)) lacks ${lack[*]}"
}

check_prefix() {
  [[ $1 =~ ^[a-z0-9][a-z0-9-]{0,23}$ ]] ||
    fail "bad prefix '$1': lower-case letters, digits and '-', at most 24 characters"
}

host_index() {  # host_index A|B -> a|b
  case $1 in
    A | a) echo a ;;
    B | b) echo b ;;
    *) fail "no host '$1': the hosts are A and B" ;;
  esac
}

# The state of prefix P lives in $RUN_ROOT/P: subnet (N), the persistent
# namespaces mnt-a, uts-a, mnt-b, uts-b, the boot ids, and `ready` once whole.
dir_of() { echo "$RUN_ROOT/$1"; }
netns_of() { echo "$1-$2"; }
is_mounted() { findmnt -rn --mountpoint "$1" >/dev/null 2>&1; }

lock() {
  mkdir -p "$RUN_ROOT"
  exec 9>"$RUN_ROOT/.lock"
  flock -w 60 9 || fail "another $PROG holds $RUN_ROOT/.lock for over 60 s"
}

free_subnet() {  # the lowest N in 1..254 that no prefix holds
  local used n
  used=$(cat "$RUN_ROOT"/*/subnet 2>/dev/null || true)
  for ((n = 1; n <= 254; n++)); do
    grep -qx "$n" <<<"$used" || { echo "$n"; return; }
  done
  fail "all 254 subnets of $NET_PREFIX.0.0/16 are held by other prefixes ($PROG status)"
}

address_of() {  # address_of PREFIX a|b
  local d n
  d=$(dir_of "$1")
  [ -f "$d/ready" ] || fail "no hosts with prefix '$1': run '$PROG up $1' first"
  n=$(cat "$d/subnet")
  if [ "$2" = a ]; then echo "$NET_PREFIX.$n.1"; else echo "$NET_PREFIX.$n.2"; fi
}

is_whole() {  # the hosts of PREFIX exist and are complete
  local d h
  d=$(dir_of "$1")
  [ -f "$d/ready" ] || return 1
  for h in a b; do
    ip netns list 2>/dev/null | grep -q "^$(netns_of "$1" $h)\b" || return 1
    is_mounted "$d/mnt-$h" && is_mounted "$d/uts-$h" || return 1
  done
}

# The veth pair, made straight inside the two namespaces, with its addresses.
make_link() {  # make_link PREFIX N
  local na nb
  na=$(netns_of "$1" a)
  nb=$(netns_of "$1" b)
  ip link add "$LINK" netns "$na" type veth peer name "$LINK" netns "$nb"
  ip -n "$na" addr add "$NET_PREFIX.$2.1/24" dev "$LINK"
  ip -n "$nb" addr add "$NET_PREFIX.$2.2/24" dev "$LINK"
  local ns
  for ns in "$na" "$nb"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$LINK" up
  done
}

# A host's persistent mount and UTS namespaces, entered from its network
# namespace: private /tmp and /dev/shm, its boot id and host name. Its copies
# of the namespace files bound on the real host (ip netns, other hosts) are
# unmounted, so that a host holds no other namespace alive: removed hosts go
# at once, whatever other hosts exist.
make_identity() {  # make_identity PREFIX a|b
  local d=$(dir_of "$1") h=$2
  cat /proc/sys/kernel/random/uuid >"$d/boot_id-$h"
  touch "$d/mnt-$h" "$d/uts-$h"
  nsenter --net="/run/netns/$(netns_of "$1" "$h")" \
    unshare --mount="$d/mnt-$h" --uts="$d/uts-$h" --propagation private \
    /bin/sh -ec '
      findmnt -rn -t nsfs -o TARGET | while read -r m; do umount "$m" || umount -l "$m"; done
      case "$4/" in /tmp/*)
        mkdir -p "$5"; mount --bind "$4" "$5" ;;
      esac
      mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
      case "$4/" in /tmp/*)
        mkdir -p "$4"; mount --move "$5" "$4" ;;
      esac
      mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
      mount --bind "$1" "$3"
      mount -o remount,bind,ro "$3"
      hostname "$2"' sh "$d/boot_id-$h" "$1-$h" "$BOOT_ID" "$TREE" "$d/tree-$h"
}

up() {
  local p=$1 d n
  d=$(dir_of "$p")
  lock
  if is_whole "$p"; then
    summary "$p"
    return
  fi
  teardown "$p"
  n=$(free_subnet)
  mkdir -p "$d"
  mount --bind "$d" "$d"
  mount --make-private "$d"
  echo "$n" >"$d/subnet"
  # Whatever fails from here leaves nothing behind, and says what failed.
  trap 'rc=$? what=$BASH_COMMAND; trap - ERR; teardown "$p"
        cannot "setting up prefix $p failed at: $what (status $rc)"' ERR
  local h
  for h in a b; do
    ip netns add "$(netns_of "$p" $h)"
  done
  make_link "$p" "$n"
  for h in a b; do
    make_identity "$p" $h
  done
  trap - ERR
  touch "$d/ready"
  summary "$p"
}

summary() {  # one line per host
  local p=$1 d h
  d=$(dir_of "$p")
  for h in a b; do
    echo "host ${h^^} ($p): netns $(netns_of "$p" $h), address $(address_of "$p" $h)," \
      "boot id $(cat "$d/boot_id-$h"), hostname $p-$h"
  done
}

# Processes inside the hosts (their network or mount namespace), killed.
kill_members() {  # kill_members PREFIX
  local d=$(dir_of "$1") h ns pids=() f pid
  local inodes=()
  for h in a b; do
    ns=$(netns_of "$1" $h)
    [ -e "/run/netns/$ns" ] && mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2>/dev/null || true)
    f=$d/mnt-$h
    is_mounted "$f" && inodes+=("mnt:[$(stat -L -c %i "$f")]")
  done
  if ((${#inodes[@]})); then
    for f in /proc/[0-9]*/ns/mnt; do
      local link
      link=$(readlink "$f" 2>/dev/null) || continue
      for h in "${inodes[@]}"; do
        [ "$link" = "$h" ] && { pid=${f#/proc/}; pids+=("${pid%%/*}"); }
      done
    done
  fi
  ((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null || true
}

teardown() {  # removes whatever exists of PREFIX; never fails
  local p=$1 d h ns
  d=$(dir_of "$p")
  kill_members "$p"
  for h in a b; do
    for f in "$d/mnt-$h" "$d/uts-$h"; do
      is_mounted "$f" && umount "$f" 2>/dev/null || true
    done
    ns=$(netns_of "$p" $h)
    [ -e "/run/netns/$ns" ] && { ip netns del "$ns" 2>/dev/null || true; }
  done
  while is_mounted "$d"; do umount "$d" 2>/dev/null || break; done
  rm -rf "$d"
}

down() {
  lock
  teardown "$1"
  echo "hosts of prefix $1 removed"
}

run_in() {  # run_in a|b PREFIX CMD...: this process becomes CMD inside the host
  local h=$1 p=$2 d
  shift 2
  d=$(dir_of "$p")
  address_of "$p" "$h" >/dev/null
  (($#)) || fail "exec: no command after --"
  # Entering a mount namespace moves to its root: the command starts in this
  # directory when the host sees it, else in /.
  exec nsenter --net="/run/netns/$(netns_of "$p" "$h")" --mount="$d/mnt-$h" --uts="$d/uts-$h" -- \
    /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' "$PROG" "$PWD" "$@"
}

status() {  # status [PREFIX]
  local dirs=() d p
  if (($#)); then dirs=("$(dir_of "$1")"); else dirs=("$RUN_ROOT"/*/); fi
  for d in "${dirs[@]}"; do
    d=${d%/}
    [ -d "$d" ] || continue
    p=$(basename "$d")
    if is_whole "$p"; then summary "$p"; else echo "prefix $p: incomplete ('$PROG down $p' removes it)"; fi
  done
}

main() {
  (($#)) || usage
  local cmd=$1 host=
  shift
  case $cmd in
    exec | addr | netns) (($#)) || usage; host=$(host_index "$1"); shift ;;
    up | down) ;;
    status) (($# == 0)) || check_prefix "$1"; status "$@"; return ;;
    *) usage ;;
  esac
  local prefix=clanorb
  if (($#)) && [ "$1" != -- ]; then prefix=$1; shift; fi
  check_prefix "$prefix"
  case $cmd in
    up) preflight; up "$prefix" ;;
    down) preflight; down "$prefix" ;;
    addr) address_of "$prefix" "$host" ;;
    netns)
      address_of "$prefix" "$host" >/dev/null
      echo "/run/netns/$(netns_of "$prefix" "$host")"
      ;;
    exec)
      [ "${1:-}" = -- ] && shift
      preflight
      run_in "$host" "$prefix" "$@"
      ;;
  esac
}

main "$@"
