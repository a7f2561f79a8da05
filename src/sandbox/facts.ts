/**
 * What this machine offers a confined child, as far as the parent can tell before starting one:
 * the Landlock ABI (asked of the kernel through FFI, which costs nothing), whether a user and
 * network namespace can be expected (the launcher must run single-threaded, which only the
 * compiled binary does, and the kernel must allow unprivileged user namespaces), seccomp, and
 * on macOS `sandbox-exec`. The launcher reports what it really got; this is the forecast `tools`
 * and `check` show before anything runs. Probed once per process; what a launcher finds out is
 * folded in (`learnCapabilities`).
 */
import { existsSync, readFileSync } from "node:fs";
import process from "node:process";
import { libc } from "../platform/syscalls.ts";
import { compiled } from "../platform/runtime.ts";
import type { Capabilities } from "./enforcement.ts";

const read = (p: string) => {
  try {
    return readFileSync(p, "utf8").trim();
  } catch {
    return undefined;
  }
};

/** Why unprivileged user namespaces are off here, from the sysctls that switch them off. Pure. */
export function usernsBlocked(
  sysctl: (name: string) => string | undefined,
  root: boolean,
): string | undefined {
  if (sysctl("user/max_user_namespaces") === "0") return "user.max_user_namespaces is 0";
  if (root) return undefined;
  if (sysctl("kernel/unprivileged_userns_clone") === "0") return "kernel.unprivileged_userns_clone is 0";
  if (sysctl("kernel/apparmor_restrict_unprivileged_userns") === "1") {
    return "AppArmor restricts unprivileged user namespaces";
  }
  return undefined;
}

let probed: Capabilities | undefined;

export function probeCapabilities(
  platform: NodeJS.Platform = process.platform,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Capabilities {
  if (probed && platform === process.platform) return probed;
  const caps: Capabilities = {
    platform,
    landlockAbi: 0,
    namespace: false,
    seccomp: false,
    seatbelt: false,
    why: {},
  };
  if (platform === "darwin") caps.seatbelt = existsSync("/usr/bin/sandbox-exec");
  if (platform === "linux") {
    const c = libc();
    if (!c) caps.why.landlock = "no FFI to ask the kernel";
    else {
      const abi = c.call("landlock_create_ruleset", 0, 0, 1);
      caps.landlockAbi = Math.max(0, abi);
      if (abi < 0) caps.why.landlock = abi === -38 ? "the kernel has none" : "it is disabled";
    }
    caps.seccomp = /^Seccomp:/m.test(read("/proc/self/status") ?? "");
    if (!caps.seccomp) caps.why.seccomp = "the kernel has none";
    const blocked = usernsBlocked((n) => read(`/proc/sys/${n}`), process.getuid?.() === 0);
    // only a compiled hermit starts with one thread (Deno and Bun running sources start several)
    const single = compiled || !!env.HERMIT_SELF;
    caps.namespace = !blocked && single;
    if (blocked) caps.why.namespace = blocked;
    else if (!single) caps.why.namespace = "hermit runs from sources, whose runtime starts several threads";
  }
  if (platform === process.platform) probed = caps;
  return caps;
}

/**
 * What a launcher found out is a fact of this machine: later forecasts (the command tools that
 * `tools` shows without running them) use it. A namespace counts only when one was tried.
 */
export function learnCapabilities(caps: Capabilities, found: Capabilities): void {
  if (found.namespace || found.why.namespace) {
    caps.namespace = found.namespace;
    caps.why.namespace = found.why.namespace;
  }
  if (found.seccomp || found.why.seccomp) {
    caps.seccomp = found.seccomp;
    caps.why.seccomp = found.why.seccomp;
  }
}
