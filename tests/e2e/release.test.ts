/**
 * The release as `deno task build --all` writes it (here into a temporary directory with
 * `--out`): every target present and in the right executable format for its OS, CPU and C
 * library (read from the file headers), every SHA256SUMS line verified against the files (and by
 * `sha256sum -c`, as a user would), install.sh published beside them. Then install.sh against
 * that release, served over HTTP, inside minimal root file systems holding only busybox and a C
 * library: it picks linux-x64 on glibc (also when a musl loader is installed beside glibc, as
 * Debian's `musl` package does) and linux-x64-musl on musl (with and without ldd), verifies,
 * installs, and the installed binary runs there; a wrong checksum is refused.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fixtures, root } from "../helpers/hermit.ts";
import { findTool, isRoot, requirements, Rootfs } from "../helpers/rootfs.ts";
import { runBuild } from "../helpers/targets.ts";
import { tempDir } from "../helpers/tmp.ts";

const version: string = JSON.parse(readFileSync(path.join(root, "deno.json"), "utf8")).version;

/** What each release file must be, by its headers. */
const FORMATS: Record<string, string> = {
  "hermit-linux-x64": "ELF x86-64 /lib64/ld-linux-x86-64.so.2",
  "hermit-linux-arm64": "ELF aarch64 /lib/ld-linux-aarch64.so.1",
  "hermit-linux-x64-musl": "ELF x86-64 /lib/ld-musl-x86_64.so.1",
  "hermit-darwin-x64": "Mach-O x86_64",
  "hermit-darwin-arm64": "Mach-O arm64",
  "hermit-windows-x64.exe": "PE32+ x86-64",
};

/** "ELF <machine> <interpreter>", "Mach-O <cpu>" or "PE32+ <machine>", from the first bytes. */
function format(file: string): string {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) === 0x7f454c46) {
    const machine = ({ 0x3e: "x86-64", 0xb7: "aarch64" } as Record<number, string>)[b.readUInt16LE(18)] ??
      "?";
    const phoff = Number(b.readBigUInt64LE(32));
    const [size, count] = [b.readUInt16LE(54), b.readUInt16LE(56)];
    let interp = "static";
    for (let i = 0; i < count; i++) {
      const ph = phoff + i * size;
      if (b.readUInt32LE(ph) !== 3) continue; // PT_INTERP
      const off = Number(b.readBigUInt64LE(ph + 8));
      interp = b.subarray(off, off + Number(b.readBigUInt64LE(ph + 32)) - 1).toString();
    }
    return `ELF ${machine} ${interp}`;
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) {
    return `Mach-O ${
      ({ 0x01000007: "x86_64", 0x0100000c: "arm64" } as Record<number, string>)[b.readUInt32LE(4)]
    }`;
  }
  if (b.toString("latin1", 0, 2) === "MZ") {
    const pe = b.readUInt32LE(0x3c);
    const ok = b.toString("latin1", pe, pe + 4) === "PE\0\0" && b.readUInt16LE(pe + 24) === 0x20b;
    return `${ok ? "PE32+" : "PE?"} ${b.readUInt16LE(pe + 4) === 0x8664 ? "x86-64" : "?"}`;
  }
  return "unknown";
}

const busybox = findTool("busybox");
const gcc = findTool("gcc");
const req = requirements([
  { what: "root (for unshare --root)", ok: isRoot(), fix: "run the tests as root, as CI does" },
  { what: "unshare", ok: !!findTool("unshare"), fix: "apt-get install -y util-linux" },
  { what: "busybox (static)", ok: !!busybox, fix: "apt-get install -y busybox-static" },
  { what: "musl", ok: existsSync("/lib/ld-musl-x86_64.so.1"), fix: "apt-get install -y musl" },
  { what: "gcc", ok: !!gcc, fix: "apt-get install -y gcc" },
]);

const sha256 = (f: string) => createHash("sha256").update(readFileSync(f)).digest("hex");

describe("release: deno task build --all", () => {
  const work = tempDir("hermit-release-");
  const dist = path.join(work.path, "dist");
  after(() => work.cleanup());

  before(async () => {
    await runBuild(["--all", "--out", dist], 600_000);
  });

  it("writes every target, each an executable of its OS, CPU and C library", () => {
    assert.deepEqual(readdirSync(dist).sort(), [...Object.keys(FORMATS), "SHA256SUMS", "install.sh"].sort());
    for (const [name, want] of Object.entries(FORMATS)) {
      assert.equal(format(path.join(dist, name)), want, name);
      assert.ok(statSync(path.join(dist, name)).size > 20e6, `${name} carries its runtime`);
      if (!name.endsWith(".exe")) assert.equal(statSync(path.join(dist, name)).mode & 0o111, 0o111, name);
    }
    assert.equal(
      readFileSync(path.join(dist, "install.sh"), "utf8"),
      readFileSync(path.join(root, "install.sh"), "utf8"),
    );
  });

  it("lists every target in SHA256SUMS, and every line matches its file", () => {
    const lines = readFileSync(path.join(dist, "SHA256SUMS"), "utf8").trimEnd().split("\n");
    const listed = lines.map((l) => {
      const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l);
      assert.ok(m, `a sha256sum line: ${l}`);
      assert.equal(m[1], sha256(path.join(dist, m[2])), m[2]);
      return m[2];
    });
    assert.deepEqual(listed.sort(), Object.keys(FORMATS).sort());
    const check = execFileSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: dist, encoding: "utf8" });
    assert.equal(check.trim().split("\n").filter((l) => l.endsWith(": OK")).length, 6, check);
  });

  describe("install.sh against this release, in minimal root file systems", { skip: req.skip }, () => {
    const APPLETS = ["sh", "uname", "mkdir", "chmod", "mv", "rm", "wget", "sha256sum"];
    let server: http.Server;
    let base = "";
    let shim = "";
    let n = 0;

    before(async () => {
      req.assertReady();
      shim = path.join(work.path, "gcompat.so");
      execFileSync(gcc!, [
        "-shared",
        "-fPIC",
        "-nostdlib",
        "-O2",
        "-o",
        shim,
        path.join(fixtures, "musl", "gcompat.c"),
      ]);
      // A wrong SHA256SUMS: every hash replaced by another file's.
      const sums = readFileSync(path.join(dist, "SHA256SUMS"), "utf8");
      writeFileSync(
        path.join(work.path, "WRONGSUMS"),
        sums.replace(/^[0-9a-f]{64}/gm, sha256(path.join(dist, "install.sh"))),
      );
      server = http.createServer((req, res) => {
        const m = /^\/(good|wrong)\/latest\/download\/([\w.-]+)$/.exec(req.url ?? "");
        const file = !m
          ? undefined
          : m[1] === "wrong" && m[2] === "SHA256SUMS"
          ? path.join(work.path, "WRONGSUMS")
          : path.join(dist, m[2]);
        if (!file || !existsSync(file)) return void res.writeHead(404).end("Not Found");
        res.writeHead(200, { "content-length": String(statSync(file).size) });
        createReadStream(file).pipe(res);
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    after(async () => {
      if (server) await new Promise<void>((r) => server.close(() => r()));
    });

    /** A root with busybox and one C library; install.sh from `scenario` with `| sh`. */
    async function install(libc: "glibc" | "musl", scenario: string, extra: (fs: Rootfs) => void = () => {}) {
      const fs = new Rootfs(path.join(work.path, `root-${++n}`));
      fs.busybox(busybox!, APPLETS);
      if (libc === "glibc") fs.glibcFor(path.join(dist, "hermit-linux-x64"));
      else fs.musl(shim);
      extra(fs);
      fs.mkdir("/home/user");
      const r = await fs.run(["/bin/sh"], {
        input: readFileSync(path.join(root, "install.sh"), "utf8"),
        env: { PATH: "/bin", HOME: "/home/user", HERMIT_DOWNLOAD_BASE: `${base}/${scenario}` },
        timeoutMs: 120_000,
      });
      return { fs, r, bin: "/home/user/.local/bin/hermit" };
    }

    for (
      const [libc, variant, extra, want] of [
        ["glibc", "", undefined, "hermit-linux-x64"],
        [
          "glibc",
          " with a musl loader installed too",
          (fs: Rootfs) => void fs.musl(shim),
          "hermit-linux-x64",
        ],
        ["musl", " without ldd", undefined, "hermit-linux-x64-musl"],
        [
          "musl",
          " with ldd",
          (fs: Rootfs) => void fs.link("/usr/bin/ldd", "/lib/ld-musl-x86_64.so.1"),
          "hermit-linux-x64-musl",
        ],
      ] as const
    ) {
      it(`on ${libc}${variant}: installs ${want}, verified, and it runs there`, async () => {
        const { fs, r, bin } = await install(libc, "good", extra);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, new RegExp(`downloading ${want} \\(latest\\)`));
        assert.equal(sha256(fs.at(bin)), sha256(path.join(dist, want)));
        assert.match(r.stderr, new RegExp(`installed hermit ${version} to ${bin}`));
        const v = await fs.run([bin, "--version"], { env: { PATH: "/bin", HOME: "/home/user" } });
        assert.equal(v.stdout, `hermit ${version}\n`, v.stderr);
      });
    }

    it("on musl: refuses a download whose checksum does not match, installing nothing", async () => {
      const { fs, r } = await install("musl", "wrong");
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /^error: checksum mismatch for hermit-linux-x64-musl: expected [0-9a-f]{64}, got [0-9a-f]{64}; refusing to install it$/m,
      );
      assert.deepEqual(readdirSync(fs.at("/home/user/.local/bin")), []);
    });
  });
});
