/**
 * Addresses a sandboxed entry must not reach through its egress proxy by a name: the host's own
 * loopback, link-local (cloud metadata at 169.254.169.254), the unspecified address (which
 * reaches loopback), and the two instance-metadata services outside link-local (Alibaba Cloud's
 * 100.100.100.200, AWS's IPv6 fd00:ec2::254), in IPv4 and IPv6, an IPv4 address written inside
 * an IPv6 one included.
 * The proxy resolves outside the sandbox's network namespace, so a listed name whose DNS someone
 * else controls (a wildcard's subdomain) could otherwise point into the host. Pure.
 */
import net from "node:net";

export type InternalKind = "loopback" | "link-local" | "unspecified" | "cloud metadata";

/** fd00:ec2::254, AWS's instance metadata over IPv6 (a unique-local address, not link-local). */
const AWS_METADATA_V6 = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254];

/** What kind of host-internal address `ip` is (an IP literal), or undefined for any other. */
export function internalAddress(ip: string): InternalKind | undefined {
  const bare = ip.replace(/%.*$/, "");
  if (net.isIPv4(bare)) return internalV4(bare.split(".").map(Number));
  if (!net.isIPv6(bare)) return undefined;
  const h = hextets(bare);
  if (h.every((x) => x === 0)) return "unspecified";
  if (h.slice(0, 7).every((x) => x === 0) && h[7] === 1) return "loopback";
  if ((h[0] & 0xffc0) === 0xfe80) return "link-local";
  if (h.every((x, i) => x === AWS_METADATA_V6[i])) return "cloud metadata";
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible): the IPv4 address inside
  const mapped = h.slice(0, 5).every((x) => x === 0) && (h[5] === 0xffff || h[5] === 0);
  return mapped ? internalV4([h[6] >> 8, h[6] & 0xff, h[7] >> 8, h[7] & 0xff]) : undefined;
}

function internalV4([a, b, c, d]: number[]): InternalKind | undefined {
  if (a === 127) return "loopback";
  if (a === 100 && b === 100 && c === 100 && d === 200) return "cloud metadata";
  if (a === 169 && b === 254) return "link-local";
  if (a === 0) return "unspecified";
  return undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing IPv4 part split). */
function hextets(ip: string): number[] {
  let text = ip.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const part = (s: string | undefined) => (s ? s.split(":").map((x) => parseInt(x, 16)) : []);
  const [h, t] = [part(head), part(tail)];
  return tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t];
}
