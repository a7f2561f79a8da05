/**
 * What is enforced where, in words: the line `tools` and `check` show per platform and kernel,
 * what is left unenforced (the warning, and the refusal under `require`), and the hint a
 * confined server's failed start gets (the key that would open what it tripped over).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Capabilities,
  enforcement,
  failureHint,
  launchGaps,
  refusalLine,
  summary,
  warningLine,
} from "../../../src/sandbox/enforcement.ts";
import { refusal } from "../../../src/sandbox/launcher.ts";
import type { Policy } from "../../../src/sandbox/policy.ts";

const linux = (over: Partial<Capabilities> = {}): Capabilities => ({
  platform: "linux",
  landlockAbi: 7,
  namespace: true,
  seccomp: true,
  seatbelt: false,
  why: {},
  ...over,
});
const policy = (network: Policy["network"], off = false): Policy => ({
  label: "mcp_servers.x",
  off,
  require: false,
  fs: [],
  network,
  networkDeclared: false,
  tmpDir: "/t",
  caches: [],
  unresolved: [],
  create: [],
  workspaceSkipped: false,
});
const none = policy({ mode: "none" });
const all = policy({ mode: "all" });
const list = policy({
  mode: "allow",
  allow: [{ host: "api.example.com", port: 443 }, { host: "::1", port: 8080 }],
});
const line = (p: Policy, c: Capabilities) => summary(enforcement(p, c));

describe("the confinement line", () => {
  it("Linux with everything", () => {
    assert.equal(line(none, linux()), "fs: landlock abi 7; network: none (namespace)");
    assert.equal(line(all, linux()), "fs: landlock abi 7; network: all");
    assert.equal(
      line(list, linux()),
      "fs: landlock abi 7; network: api.example.com:443, [::1]:8080 (proxy; tcp: landlock; udp: seccomp)",
    );
    assert.deepEqual(enforcement(none, linux()).missing, []);
  });

  it("no namespace: seccomp cuts the network", () => {
    const c = linux({ namespace: false, why: { namespace: "the launcher runs 5 threads" } });
    assert.equal(line(none, c), "fs: landlock abi 7; network: none (seccomp)");
    assert.deepEqual(enforcement(none, c).missing, []);
  });

  it("neither namespace nor seccomp: Landlock's TCP rules, and UDP is said to remain", () => {
    const c = linux({ namespace: false, seccomp: false, why: { namespace: "x", seccomp: "y" } });
    assert.equal(line(none, c), "fs: landlock abi 7; network: none (landlock tcp)");
    assert.match(enforcement(none, c).missing[0], /^UDP and DNS are not cut/);
  });

  it("old kernels: what each missing ABI costs", () => {
    const abi3 = enforcement(list, linux({ landlockAbi: 3 }));
    assert.deepEqual(abi3.missing, ["direct TCP connections are not blocked (Landlock ABI 3 < 4)"]);
    const none0 = enforcement(none, linux({ landlockAbi: 0, namespace: false, seccomp: false }));
    assert.equal(none0.fs, "not enforced");
    assert.equal(none0.network, "not enforced");
    assert.equal(none0.missing.length, 2);
    assert.match(none0.missing[0], /files are not confined \(no Landlock; it needs Linux 5\.13 or later\)/);
  });

  it("macOS and Windows", () => {
    const mac: Capabilities = { ...linux(), platform: "darwin", seatbelt: true, landlockAbi: 0 };
    assert.equal(line(none, mac), "fs: seatbelt; network: none (seatbelt)");
    assert.equal(line(list, mac), "fs: seatbelt; network: api.example.com:443, [::1]:8080 (proxy; seatbelt)");
    assert.deepEqual(enforcement(all, { ...mac, seatbelt: false }).missing, [
      "nothing is enforced (no /usr/bin/sandbox-exec)",
    ]);
    const win: Capabilities = { ...linux(), platform: "win32", landlockAbi: 0 };
    assert.equal(line(all, win), "fs: not enforced; network: not enforced");
    assert.deepEqual(enforcement(all, win).missing, ["nothing is enforced (no sandbox on Windows)"]);
  });

  it("off", () => {
    assert.equal(
      line(policy({ mode: "all" }, true), linux()),
      "off (sandbox: off; runs with your full access)",
    );
  });
});

describe("warnings, refusals and hints", () => {
  const e = enforcement(none, linux({ landlockAbi: 0, why: { landlock: "the kernel has none" } }));

  it("one line each", () => {
    assert.equal(
      warningLine("mcp_servers.x", e),
      "mcp_servers.x: sandbox: not enforced here: files are not confined (no Landlock (the kernel has none); it needs Linux 5.13 or later)",
    );
    assert.match(
      refusalLine("mcp_servers.x", e),
      /^refused: mcp_servers\.x: the sandbox is required \(sandbox\.require or HERMIT_SANDBOX=require\) but files are not confined .*; it was not started$/,
    );
  });

  it("under require, a policy file no mount could keep read-only refuses; a narrowed directory does not", () => {
    const plan = (require: boolean) => ({
      label: "tools.t",
      fs: [{ path: "/", level: "read" as const }],
      network: { mode: "all" as const },
      require,
    });
    const found = { caps: linux({ namespace: false }), narrowed: ["/w"] };
    // a directory narrowed to its existing entries: what it leads to stays protected (said, not refused)
    assert.equal(refusal(plan(true), found), undefined);
    const writable = { ...found, writable: ["/w/a/hermit.yaml"] };
    assert.equal(refusal(plan(false), writable), undefined);
    assert.equal(
      refusal(plan(true), writable),
      '/w/a/hermit.yaml can be changed (no mount namespace here to make it read-only: run the compiled hermit where user namespaces are allowed, or add "/w/a/hermit.yaml" to tools.t.sandbox.read to keep it read-only and the directories above it to their existing entries)',
    );
    // with what enforcement misses, both
    assert.match(
      refusal(plan(true), { ...writable, caps: linux({ landlockAbi: 0 }) })!,
      /^files are not confined .*; \/w\/a\/hermit\.yaml can be changed/,
    );
    const gaps = launchGaps("tools.t", {
      narrowed: ["/w"],
      writable: ["/w/a/hermit.yaml", "/w/a/hermit.lock"],
    });
    assert.deepEqual(gaps.map((g) => g.refuses), [false, true]);
    assert.match(
      gaps[0].phrase,
      /^new entries cannot be made directly in \/w \(they lead to a protected path/,
    );
    assert.match(
      gaps[1].phrase,
      /^\/w\/a\/hermit\.yaml, \/w\/a\/hermit\.lock can be changed \(no mount namespace here to make them read-only: .* add "\/w\/a\/hermit\.yaml", "\/w\/a\/hermit\.lock" to tools\.t\.sandbox\.read /,
    );
  });

  it("name the key that would open what the server tripped over", () => {
    const ok = enforcement(none, linux());
    const at = (tail: string[]) => failureHint(none, ok, tail);
    assert.match(
      at(["Error: EACCES: permission denied, open '/home/u/.config/tool/settings.json'"]),
      /add "\/home\/u\/\.config\/tool\/settings\.json" to mcp_servers\.x\.sandbox\.read$/,
    );
    assert.match(
      at(["Error: EACCES: permission denied, mkdir '/srv/data/cache'"]),
      /add "\/srv\/data\/cache" to mcp_servers\.x\.sandbox\.write$/,
    );
    assert.match(
      at(["PermissionError: [Errno 13] Permission denied: '/var/lib/x.db'"]),
      /add "\/var\/lib\/x\.db" to mcp_servers\.x\.sandbox\.read$/,
    );
    assert.match(
      at(["sh: 1: cannot create /opt/out.txt: Permission denied"]),
      /to mcp_servers\.x\.sandbox\.write$/,
    );
    assert.match(
      at(["cat: /srv/in.txt: Permission denied"]),
      /add "\/srv\/in\.txt" to mcp_servers\.x\.sandbox\.read$/,
    );
    // a relative path names no key to open: the whole block is suggested
    assert.match(at(["cat: .serve/endpoint: Permission denied"]), /open mcp_servers\.x\.sandbox \(read:/);
    assert.match(
      at(["Error: getaddrinfo EAI_AGAIN registry.npmjs.org"]),
      /set mcp_servers\.x\.sandbox\.network/,
    );
    assert.match(
      at(["Segmentation fault"]),
      /^it runs in the sandbox \(fs: landlock abi 7; network: none \(namespace\)\); if it needs more, open mcp_servers\.x\.sandbox \(read:, write:, network:\) or set sandbox: off$/,
    );
  });

  it("npm's ENOTCACHED without a network: the package to fetch once, not a network to open", () => {
    // network: none runs npm offline (hermit's own doing): a cold cache, as on a teammate's fresh
    // clone of an adapter made with 'hermit add', is fixed by fetching, not by opening the sandbox
    const tail = [
      "npm error code ENOTCACHED",
      "npm error request to https://registry.npmjs.org/@modelcontextprotocol%2fserver-memory failed: cache mode is 'only-if-cached' but no cached response is available.",
    ];
    const npx = { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory@2026.8.31"] };
    assert.equal(
      failureHint(none, enforcement(none, linux()), tail, npx),
      "it runs in the sandbox (fs: landlock abi 7; network: none (namespace)), where npm is offline, and @modelcontextprotocol/server-memory@2026.8.31 is not in npm's cache: fetch it once with 'npx -y --package @modelcontextprotocol/server-memory@2026.8.31 -- node --version' (runs none of its code), then start it again",
    );
    // no package hermit can name: the same advice in general words
    assert.match(
      failureHint(none, enforcement(none, linux()), tail),
      /where npm is offline, and its package is not in npm's cache: run it once with the network to fill the cache, then start it again$/,
    );
    // with a network, ENOTCACHED is npm's own offline setting: the key to open stays as it was
    const all: Policy = { ...none, network: { mode: "all" } };
    assert.match(
      failureHint(all, enforcement(all, linux()), tail, npx),
      /set mcp_servers\.x\.sandbox\.network/,
    );
  });

  it("a denied open of a path the policy lets it read was a write: the hint says write", () => {
    // the defaults' shape: everything readable, secrets denied, its TMPDIR writable
    const p: Policy = {
      ...none,
      fs: [
        { path: "/", level: "read" },
        { path: "/home/u/.ssh", level: "deny" },
        { path: "/t", level: "write" },
      ],
    };
    const at = (tail: string[]) => failureHint(p, enforcement(p, linux()), tail);
    // Node and Python say "open" / "Permission denied" whether the file was opened to read or write
    assert.match(
      at(["Error: EACCES: permission denied, open '/home/u/project/out.json'"]),
      /add "\/home\/u\/project\/out\.json" to mcp_servers\.x\.sandbox\.write$/,
    );
    assert.match(
      at(["PermissionError: [Errno 13] Permission denied: '/var/lib/x.db'"]),
      /add "\/var\/lib\/x\.db" to mcp_servers\.x\.sandbox\.write$/,
    );
    // a protected path is a read that was refused
    assert.match(
      at(["Error: EACCES: permission denied, open '/home/u/.ssh/config'"]),
      /add "\/home\/u\/\.ssh\/config" to mcp_servers\.x\.sandbox\.read$/,
    );
    assert.match(at(["cat: /home/u/.ssh/id_ed25519: Permission denied"]), /sandbox\.read$/);
  });
});
