/**
 * The watchdog supervisor as a POSIX `sh` script, which `hermit serve` starts instead of a second
 * copy of itself wherever `/bin/sh` exists (every Linux and macOS): it costs a shell (about 1 MiB
 * resident) instead of a JavaScript runtime (about 40). It speaks the same protocol as
 * `hermit watchdog --supervise` (`watchdog_run.ts`): `register <pgid>` / `unregister <pgid>` lines
 * on stdin; on EOF (hermit is gone, or done and has unregistered everything) every registered
 * group gets SIGTERM, then SIGKILL once the grace period is over. Its rules are the same:
 *  - a group id must be digits only, above 1, and neither the watchdog's own id nor its parent's;
 *    anything else is ignored, as are unknown lines;
 *  - a group that was unregistered, or was found empty, is dropped and never signalled again (its
 *    id may since belong to someone else); every line received prunes the empty ones;
 *  - SIGPIPE is ignored, so a host that closed its end of stderr cannot stop the reaping;
 *  - `kill` is probed once for its dialect: dash and bash need `--` before a negative id, busybox
 *    rejects it.
 * Unlike the JS watchdog it has no timer: hermit's death reaches it as EOF, which is immediate
 * (the pipe's write end lives only in hermit), and a signal ends it without reaping (hermit then
 * starts a new one and hands it the live groups). Kept to POSIX sh (dash, bash, busybox, macOS's
 * sh); a fractional `sleep` is used when the system's `sleep` takes one, whole seconds otherwise.
 */

/**
 * The script; its parameters, after `$0` = "watchdog": --ppid N --supervise GRACE_TENTHS LOG TAG.
 * TAG (may be empty): the prefix of the group tags hermit hands out (`escapes.ts`); once hermit is
 * gone, every group with a process whose environment carries one is stopped too (Linux: found
 * with one `grep -z` over the /proc/<pid>/environ of the processes outside the groups it has: at
 * EOF, about once a second during the grace, and at SIGKILL), for what escaped before hermit saw
 * it. That search runs beside the stop of the registered groups (a background subshell), so
 * however slow it is (a fork storm), their SIGKILL comes on time.
 */
export const SH_WATCHDOG = `set -f; trap '' PIPE
ppid=$2 grace=$4 level=$5 tag=$6 groups=' ' cr=$(printf '\\r')
say() { [ "$HERMIT_LOG_TIMESTAMPS" = 1 ] && ts="$(date -u +%Y-%m-%dT%H:%M:%SZ) " || ts=''
  printf '%shermit: %s: watchdog: %s\\n' "$ts" "$1" "$2" >&2; }
if kill -s 0 -- $$ 2>/dev/null; then sig() { kill -s "$1" -- "-$2" 2>/dev/null; }
else sig() { kill -s "$1" "-$2" 2>/dev/null; }; fi
alive() { sig 0 "$1"; }
prune() { k=' '; for g in $groups; do alive "$g" && k="$k$g "; done; groups=$k; }
pgid_of() { set -- $1; g=$3; }
case $tag in *[!0-9a-f-]*) tag='';; esac
tagged() { [ -n "$tag" ] && [ -d /proc/self ] || return 0
  set +f; c=''; for d in /proc/[0-9]*; do { read -r s <"$d/stat"; } 2>/dev/null || continue
    pgid_of "\${s##*) }"; case "$known$groups" in *" $g "*) ;; *) c="$c $d/environ";; esac; done; set -f
  [ -n "$c" ] || return 0; f=$(grep -lsxz "HERMIT_GROUP_TAG=$tag\\.[0-9]*" $c 2>/dev/null)
  for p in $f; do p=\${p#/proc/}; p=\${p%/environ}; { read -r s <"/proc/$p/stat"; } 2>/dev/null || continue
    pgid_of "\${s##*) }"; case $g in ''|*[!0-9]*) continue;; esac
    [ "$g" -gt 1 ] && [ "$g" != $$ ] && [ "$g" != "$ppid" ] || continue
    case $groups in *" $g "*) ;; *) groups="$groups$g "; [ -z "$1" ] || sig "$1" "$g"
      [ "$level" = debug ] && say debug "group $g carries its tag: stopping it too";; esac
  done; }
wait_grace() { t=0; while [ $t -lt "$grace" ]; do
  prune; [ "$1" = tags ] && [ $((t % 10)) -eq 9 ] && tagged TERM; [ "$groups" = ' ' ] && return 0
  if sleep 0.1 2>/dev/null; then t=$((t + 1)); else sleep 1; t=$((t + 10)); fi; done; }
tagstop() { known=$groups groups=' '; tagged TERM; [ "$groups" = ' ' ] && exit 0
  wait_grace tags; prune; for g in $groups; do sig KILL "$g"; done; tagged KILL; exit 0; }
known=''
while IFS= read -r line; do
  line=\${line%"$cr"}; n=\${line#* }
  case $n in ''|*[!0-9]*|0*) continue;; esac
  [ \${#n} -le 10 ] && [ "$n" -gt 1 ] && [ "$n" != $$ ] && [ "$n" != "$ppid" ] || continue
  prune
  case $line in
  "register $n") case $groups in *" $n "*) ;; *) groups="$groups$n "
    [ "$level" = debug ] && say debug "watching group $n";; esac;;
  "unregister $n") case $groups in *" $n "*) groups="\${groups%%" $n "*} \${groups#*" $n "}"
    [ "$level" = debug ] && say debug "no longer watching group $n";; esac;;
  esac
done
prune; set -- $groups
[ $# -eq 0 ] && tagstop
[ "$level" = silent ] || say warn "parent $ppid closed the pipe; stopping $# process group(s)"
for g in $groups; do sig TERM "$g"; done
[ -n "$tag" ] && (tagstop) &
wait_grace; [ "$groups" = ' ' ] && exit 0
prune; for g in $groups; do sig KILL "$g"; done
exit 0`;

export type ShWatchdogLog = "debug" | "warn" | "silent";

/**
 * argv of the sh watchdog for parent `ppid`: `sh -c SCRIPT watchdog --ppid N --supervise …`, so
 * `ps` shows it the way it shows the JS one. Pure.
 */
export function shWatchdogArgv(
  sh: string,
  ppid: number,
  graceMs: number,
  level: ShWatchdogLog,
  tag = "",
): string[] {
  const tenths = Math.max(0, Math.round(graceMs / 100));
  return [
    sh,
    "-c",
    SH_WATCHDOG,
    "watchdog",
    "--ppid",
    String(ppid),
    "--supervise",
    String(tenths),
    level,
    tag,
  ];
}
