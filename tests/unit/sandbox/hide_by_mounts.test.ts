/**
 * `hideByMounts` (namespaces.ts) against a recording libc: a protected path gone between the
 * policy's listing and the mount (an ssh-agent that exited, a socket removed) leaves nothing to
 * cover and does not undo the other paths' mounts; a mount the kernel refuses does.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import type { Libc } from "../../../src/platform/syscalls.ts";
import { fsView } from "../../../src/sandbox/kernel.ts";
import { hideByMounts } from "../../../src/sandbox/namespaces.ts";

function recordingLibc(refuse: (target: string) => boolean): Libc & { targets: string[] } {
  const buffers = new Map<bigint, Uint8Array>();
  const targets: string[] = [];
  return {
    arch: "x64",
    targets,
    address(buf) {
      const a = BigInt(buffers.size + 1) * 4096n;
      buffers.set(a, new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
      return a;
    },
    call(name, ...args) {
      if (name !== "mount") return 0;
      const bytes = buffers.get(BigInt(args[1]));
      const target = bytes ? new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0))) : "";
      targets.push(target);
      return refuse(target) ? -1 : 0;
    },
  };
}

const isDir = fsView.isDir;
afterEach(() => {
  fsView.isDir = isDir;
});

describe("hideByMounts", () => {
  const rules = [
    { path: "/tmp/ssh-gone/agent.1", level: "deny" as const, socket: true },
    { path: "/run/user/1000/bus", level: "deny" as const, socket: true },
  ];

  it("a path gone before its mount is nothing to hide: the others still count as covered", () => {
    fsView.isDir = (p) => p.startsWith("/tmp/ssh-gone") ? undefined : false;
    const c = recordingLibc(() => false);
    assert.equal(hideByMounts(c, rules), 2);
    assert.ok(c.targets.includes("/run/user/1000/bus"));
    assert.ok(!c.targets.includes("/tmp/ssh-gone/agent.1"));
  });

  it("a mount the kernel refuses: nothing counts as covered (the caller falls back to Landlock)", () => {
    fsView.isDir = () => false;
    const c = recordingLibc((t) => t === "/run/user/1000/bus");
    assert.equal(hideByMounts(c, rules), 0);
  });
});
