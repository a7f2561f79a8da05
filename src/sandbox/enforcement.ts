/**
 * What of a policy is enforced where, in words: from what the platform offers (predicted by the
 * parent, or reported by the launcher after it tried) to the line `tools` and `check` show
 * (`fs: landlock abi 7; network: none (namespace)`), the parts that are not enforced (one warning
 * per entry, or a refusal under `require`), and the hint a failed start gets. Pure.
 */
import { isPinnable, packageOf } from "../lock/packages.ts";
import { formatDestination } from "../manifest/sandbox.ts";
import { levelAt } from "./landlock.ts";
import type { Policy } from "./policy.ts";

/** What the platform offers a confined child. */
export interface Capabilities {
  platform: NodeJS.Platform;
  /** 0: no Landlock. */
  landlockAbi: number;
  /** A user and network namespace can be (was) made. */
  namespace: boolean;
  seccomp: boolean;
  /** macOS: `/usr/bin/sandbox-exec` is there. */
  seatbelt: boolean;
  /** Why something is missing, e.g. `{ namespace: "the launcher runs several threads (Deno)" }`. */
  why: { landlock?: string; namespace?: string; seccomp?: string };
}

export interface Enforcement {
  fs: string;
  network: string;
  /** What the policy asks for that is not enforced here, one phrase each. */
  missing: string[];
}

const because = (why: string | undefined) => why ? ` (${why})` : "";

export function enforcement(policy: Pick<Policy, "off" | "network">, caps: Capabilities): Enforcement {
  if (policy.off) return { fs: "off", network: "off", missing: [] };
  const missing: string[] = [];
  const net = policy.network;
  const list = net.mode === "allow" ? net.allow.map(formatDestination).join(", ") : "";
  if (caps.platform === "darwin") {
    if (!caps.seatbelt) {
      return {
        fs: "not enforced",
        network: "not enforced",
        missing: ["nothing is enforced (no /usr/bin/sandbox-exec)"],
      };
    }
    const network = net.mode === "all"
      ? "all"
      : net.mode === "none"
      ? "none (seatbelt)"
      : `${list} (proxy; seatbelt)`;
    return { fs: "seatbelt", network, missing };
  }
  if (caps.platform !== "linux") {
    return {
      fs: "not enforced",
      network: "not enforced",
      missing: [
        `nothing is enforced (no sandbox on ${caps.platform === "win32" ? "Windows" : caps.platform})`,
      ],
    };
  }
  const abi = caps.landlockAbi;
  let fs = `landlock abi ${abi}`;
  if (abi < 1) {
    fs = "not enforced";
    missing.push(
      `files are not confined (no Landlock${because(caps.why.landlock)}; it needs Linux 5.13 or later)`,
    );
  }
  let network = "all";
  if (net.mode === "none") {
    if (caps.namespace) network = "none (namespace)";
    else if (caps.seccomp) network = "none (seccomp)";
    else if (abi >= 4) {
      network = "none (landlock tcp)";
      missing.push(
        `UDP and DNS are not cut (no network namespace${because(caps.why.namespace)}, no seccomp${
          because(caps.why.seccomp)
        })`,
      );
    } else {
      network = "not enforced";
      missing.push(
        `network: none is not enforced (no network namespace${because(caps.why.namespace)}, no seccomp)`,
      );
    }
  } else if (net.mode === "allow") {
    const parts = ["proxy"];
    if (abi >= 4) parts.push("tcp: landlock");
    else missing.push(`direct TCP connections are not blocked (Landlock ABI ${abi} < 4)`);
    if (caps.seccomp) parts.push("udp: seccomp");
    else missing.push(`UDP is not blocked (no seccomp${because(caps.why.seccomp)})`);
    network = `${list} (${parts.join("; ")})`;
  }
  return { fs, network, missing };
}

/** The one line `tools` and `check` show. */
export function summary(e: Enforcement): string {
  return e.fs === "off"
    ? "off (sandbox: off; runs with your full access)"
    : `fs: ${e.fs}; network: ${e.network}`;
}

/** The warning for an entry that runs with parts of its policy unenforced. */
export function warningLine(label: string, e: Enforcement): string {
  return `${label}: sandbox: not enforced here: ${e.missing.join("; ")}`;
}

/** What a launcher found short of the policy beyond `enforcement`'s parts, in words. */
export interface LaunchGap {
  phrase: string;
  /**
   * `require` refuses it: a protection lost (a policy file left writable). A directory narrowed to
   * its existing entries is said but not refused: what it leads to stays protected.
   */
  refuses: boolean;
}

/**
 * The gaps in a launcher's report for the entry `label`: directories narrowed to their existing
 * entries, and the adapter's policy files (`hermit.yaml`, `hermit.lock`) no mount namespace could
 * keep read-only, with the two ways out. Pure.
 */
export function launchGaps(
  label: string,
  report: { narrowed: readonly string[]; writable?: readonly string[] },
): LaunchGap[] {
  const gaps: LaunchGap[] = [];
  if (report.narrowed.length) {
    gaps.push({
      phrase: `new entries cannot be made directly in ${
        report.narrowed.join(", ")
      } (they lead to a protected path; no mount namespace here)`,
      refuses: false,
    });
  }
  const files = report.writable ?? [];
  if (files.length) {
    const it = files.length > 1 ? "them" : "it";
    gaps.push({
      phrase: `${files.join(", ")} can be changed (no mount namespace here to make ${it} read-only: ` +
        `run the compiled hermit where user namespaces are allowed, or add ${
          files.map((f) => JSON.stringify(f)).join(", ")
        } to ${label}.sandbox.read to keep ${it} read-only and the directories above ${it} to their existing entries)`,
      refuses: true,
    });
  }
  return gaps;
}

/** The refusal for an entry whose policy requires what cannot be enforced. */
export function refusalLine(label: string, e: Enforcement): string {
  return `refused: ${label}: the sandbox is required (sandbox.require or HERMIT_SANDBOX=require) but ${
    e.missing.join("; ")
  }; it was not started`;
}

/**
 * For a confined entry that failed: the key that would open what it tripped over, read from the
 * last lines it wrote (`EACCES … '/path'` → `write:` or `read:`; name resolution or connection
 * errors → `network:`), else the whole block. npm's ENOTCACHED under `network: none` (where hermit
 * runs npm offline) is a cold cache instead: the package to fetch once (from `launch`, the command
 * as spawned), never a network to open.
 */
export function failureHint(
  policy: Policy,
  e: Enforcement,
  stderrTail: readonly string[],
  launch?: { command: string; args: readonly string[] },
): string {
  const at = `${policy.label}.sandbox`;
  const text = stderrTail.join("\n");
  if (policy.network.mode === "none" && /ENOTCACHED/.test(text)) {
    const pkg = launch && packageOf(launch.command, launch.args);
    const fetch = isPinnable(pkg) && (pkg.runner === "npx" || pkg.runner === "npm exec")
      ? `${pkg.spec} is not in npm's cache: fetch it once with 'npx -y --package ${pkg.spec} -- node --version' (runs none of its code)`
      : "its package is not in npm's cache: run it once with the network to fill the cache";
    return `it runs in the sandbox (${summary(e)}), where npm is offline, and ${fetch}, then start it again`;
  }
  const denied =
    /(?:EACCES|EPERM|EROFS)[^\n]*?(open|mkdir|mkdtemp|rename|unlink|copyfile|symlink|rmdir|scandir|access|stat)\s+'([^']+)'/i
      .exec(text) ??
      /(cannot create|can't create|Permission denied:?)\s*'?(\/[^'\s:]+)/i.exec(text) ??
      /(?:^|\s)(\/[^\s:']+): (Permission denied|Read-only file system)/im.exec(text);
  let key = `open ${at} (read:, write:, network:) or set sandbox: off`;
  if (denied) {
    const [op, where] = denied[1].startsWith("/") ? ["open", denied[1]] : [denied[1], denied[2]];
    // a denied open of a path the policy lets it read was an open for writing
    const writes = /mkdir|mkdtemp|rename|unlink|copyfile|symlink|rmdir|create|Read-only/i.test(op + text) ||
      (where.startsWith("/") && levelAt(policy.fs, where) === "read");
    key = `add ${JSON.stringify(where)} to ${at}.${writes ? "write" : "read"}`;
  } else if (
    /EAI_AGAIN|ENOTFOUND|ENETUNREACH|ECONNREFUSED|ENOTCACHED|getaddrinfo|Network is unreachable|Temporary failure in name resolution|Could not resolve host|Failed to connect|Couldn't connect/i
      .test(text)
  ) {
    key = `set ${at}.network (all, or the host:port it needs)`;
  }
  return `it runs in the sandbox (${summary(e)}); if it needs more, ${key}`;
}
