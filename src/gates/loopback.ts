/**
 * Which URLs name this machine's loopback interface: `127.x.y.z`, `localhost` or `[::1]`, as
 * `URL.hostname` spells them. What may be spoken to in plain http with credentials (a service's
 * token, an OAuth code or token, an upstream's headers): nothing on it leaves the machine.
 * Without a regular expression: a relay checks this on every start, and the regex engine costs it
 * more memory than the rest.
 */

const digits = (s: string): boolean => s !== "" && [...s].every((c) => c >= "0" && c <= "9");

/** `host` as `URL.hostname` spells it. */
export function isLoopbackName(host: string): boolean {
  if (host === "localhost" || host === "[::1]") return true;
  const parts = host.split(".");
  return parts.length === 4 && parts[0] === "127" && parts.every(digits);
}

export function isLoopback(url: URL): boolean {
  return isLoopbackName(url.hostname);
}

/** http to another host than this one: whatever is sent crosses the network readable by anyone on the way. */
export function isCleartextOffLoopback(url: URL): boolean {
  return url.protocol === "http:" && !isLoopbackName(url.hostname);
}
