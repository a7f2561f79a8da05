/**
 * macOS: the same policy as a Seatbelt (SBPL) profile for `/usr/bin/sandbox-exec -p PROFILE`.
 * Everything is allowed but what the policy takes away: writes outside the writable paths, reads
 * of the protected ones, and the network for `none` (for a destination list, only the egress
 * proxy on localhost is reachable). In SBPL the last matching rule wins, so path rules come
 * shallowest first and a deeper one overrides: the same "deepest path decides" as on Linux.
 * Seatbelt matches resolved paths, so `/tmp`, `/var` and `/etc` are also written in their
 * `/private/…` form. Pure and tested against golden files; no macOS machine runs it here.
 */
import type { FsRule } from "./landlock.ts";
import type { NetworkRule } from "./policy.ts";

export interface SeatbeltInput {
  fs: readonly FsRule[];
  network: NetworkRule;
  proxyPort?: number;
}

const quote = (p: string) => `"${p.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

/** A path and, for the macOS symlinked roots, its `/private` twin. */
function forms(p: string): string[] {
  return /^\/(tmp|var|etc)(\/|$)/.test(p) ? [p, `/private${p}`] : [p];
}

function filter(p: string): string {
  // a trailing `*` (SSH host keys) is a prefix match
  return forms(p).map((f) =>
    f.endsWith("*")
      ? `(regex #"^${f.slice(0, -1).replace(/[.^$+?()[\]{}|\\]/g, "\\$&")}")`
      : `(subpath ${quote(f)})`
  ).join(" ");
}

export function seatbeltProfile(input: SeatbeltInput): string {
  const depth = (p: string) => p === "/" ? 0 : p.split("/").length - 1;
  const rules = [...input.fs].filter((r) => r.path !== "/").sort((a, b) =>
    depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
  const root = input.fs.find((r) => r.path === "/")?.level ?? "read";
  const lines = [
    "(version 1)",
    ";; hermit sandbox: generated from the manifest's sandbox policy",
    "(allow default)",
    ";; files: the deepest path named decides (later rules win)",
  ];
  if (root !== "write") lines.push("(deny file-write*)");
  if (root === "deny") lines.push("(deny file-read*)");
  for (const r of rules) {
    const f = filter(r.path);
    if (r.level === "deny") lines.push(`(deny file-read* file-write* ${f})`);
    else if (r.level === "read") lines.push(`(allow file-read* ${f})`, `(deny file-write* ${f})`);
    else lines.push(`(allow file-read* file-write* ${f})`);
  }
  const net = input.network;
  if (net.mode !== "all") {
    lines.push(
      ";; network: no IP traffic in or out (local Unix sockets stay)",
      '(deny network-outbound (remote ip "*:*"))',
      '(deny network-bind (local ip "*:*"))',
      '(deny network-inbound (local ip "*:*"))',
    );
    if (net.mode === "allow" && input.proxyPort) {
      lines.push(
        ";; only hermit's egress proxy, which lets the listed destinations through",
        `(allow network-outbound (remote tcp "localhost:${input.proxyPort}"))`,
      );
    }
  }
  return lines.join("\n") + "\n";
}
