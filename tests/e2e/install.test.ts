/**
 * install.sh end to end: a local HTTP server in this process plays GitHub releases (with the
 * `latest/download` redirect), serving the real `dist/hermit` as `hermit-linux-x64` next to a
 * SHA256SUMS computed here. The installer runs under sh, dash and busybox sh with a controlled
 * environment: HOME and HERMIT_INSTALL in temporary directories, PATH a directory of symlinks to
 * exactly the tools the script may use (which also pins its dependencies: uname, mkdir, chmod,
 * mv, rm, ldd, one of curl/wget and one of sha256sum/shasum/openssl).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  createReadStream,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import process from "node:process";
import { hermitBin, root, runCommand, type RunResult } from "../helpers/hermit.ts";
import { sleep } from "../helpers/procs.ts";
import { findTool, requirements, toolNeeds } from "../helpers/requirements.ts";
import { tempDir } from "../helpers/tmp.ts";

const script = path.join(root, "install.sh");
const version: string = JSON.parse(readFileSync(path.join(root, "deno.json"), "utf8")).version;
const BIN = "hermit-linux-x64";
const MUSL = "hermit-linux-x64-musl";
const WIN = "hermit-windows-x64.exe";

/**
 * The Debian package of each tool a case may use beyond coreutils. A case whose tools are missing
 * is skipped with the reason outside CI and fails under CI (helpers/requirements.ts).
 */
const PACKAGES: Record<string, string> = {
  curl: "curl",
  wget: "wget",
  dash: "dash",
  busybox: "busybox-static",
  shasum: "perl",
  openssl: "openssl",
};
function which(name: string): string {
  const found = findTool(name);
  if (!found) throw new Error(`${name} is not installed (apt-get install -y ${PACKAGES[name] ?? name})`);
  return found;
}

/** Everything install.sh uses besides shell builtins, the downloader and the hash tool. */
const BASE_TOOLS = ["uname", "mkdir", "chmod", "mv", "rm", "ldd"];

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

interface Request {
  path: string; // after /<run>/<scenario>
  userAgent: string;
}

/** This process runs on glibc (a musl loader merely installed on the machine does not count). */
function runsOnGlibc(): boolean {
  try {
    return readFileSync("/proc/self/maps", "utf8").includes("ld-linux-x86-64.so");
  } catch {
    return false;
  }
}

describe("install.sh", () => {
  let work: { path: string; cleanup(): void };
  let release = "";
  /** scenario → file name → file on disk. */
  const scenarios = new Map<string, Map<string, string>>();
  const requests = new Map<string, Request[]>();
  const hashes: Record<string, string> = {};
  let server: http.Server;
  let port = 0;
  let runs = 0;

  before(async () => {
    // The real binary is served as the build for this machine; that only holds here.
    assert.ok(
      process.platform === "linux" && process.arch === "x64" && runsOnGlibc(),
      "install.test.ts serves dist/hermit as hermit-linux-x64: it runs on glibc linux-x64 only",
    );
    work = tempDir("hermit-install-test-");
    release = path.join(work.path, "release");
    mkdirSync(release);
    // A private copy: dist/hermit may be rebuilt while this runs.
    const bin = path.join(release, BIN);
    copyFileSync(hermitBin(), bin);
    hashes[BIN] = sha256(bin);

    // One byte flipped in the middle, SHA256SUMS unchanged.
    const corrupt = path.join(release, "corrupt");
    copyFileSync(bin, corrupt);
    const fd = openSync(corrupt, "r+");
    const at = Math.floor(statSync(corrupt).size / 2);
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0] ^= 0xff;
    writeSync(fd, b, 0, 1, at);
    closeSync(fd);
    hashes.corrupt = sha256(corrupt);

    // Passes the checksum but does not run here (as a wrong-platform build would not).
    const broken = path.join(release, "broken");
    writeFileSync(broken, "#!/bin/sh\necho 'broken: cannot execute binary file' >&2\nexit 126\n", {
      mode: 0o755,
    });
    hashes.broken = sha256(broken);
    const windows = path.join(release, "windows");
    writeFileSync(windows, Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00]));
    hashes.windows = sha256(windows);

    // Real SHA256SUMS lines, plus decoys whose names contain the real names.
    const decoy = createHash("sha256").update("decoy").digest("hex");
    const line = (hash: string, name: string) => `${hash}  ${name}\n`;
    let n = 0;
    const sums = (entries: [string, string][]) => {
      const f = path.join(release, `SHA256SUMS-${++n}`);
      writeFileSync(
        f,
        line(decoy, `${BIN}.tar.gz`) + entries.map(([name, hash]) => line(hash, name)).join("") +
          line(decoy, `x${BIN}`),
      );
      return f;
    };
    const allSums = sums([[MUSL, hashes[BIN]], [BIN, hashes[BIN]], [WIN, hashes.windows]]);
    const set = (name: string, files: Record<string, string>) =>
      scenarios.set(name, new Map(Object.entries(files)));
    set("good", { [BIN]: bin, [MUSL]: bin, [WIN]: windows, SHA256SUMS: allSums });
    set("corrupt", { [BIN]: corrupt, SHA256SUMS: allSums });
    set("nosum", { [BIN]: bin, [MUSL]: bin, SHA256SUMS: sums([[MUSL, hashes[BIN]]]) });
    set("broken", { [BIN]: broken, SHA256SUMS: sums([[BIN, hashes.broken]]) });

    server = http.createServer((req, res) => {
      const [, run, scenario, ...rest] = (req.url ?? "").split("/");
      const sub = "/" + rest.join("/");
      requests.get(run)?.push({ path: sub, userAgent: String(req.headers["user-agent"] ?? "") });
      const files = scenarios.get(scenario);
      let m = /^\/latest\/download\/([^/]+)$/.exec(sub);
      if (files && m) {
        // What GitHub does: latest/download/F redirects to download/vX.Y.Z/F.
        res.writeHead(302, { location: `/${run}/${scenario}/download/v${version}/${m[1]}` }).end();
        return;
      }
      m = /^\/download\/v([^/]+)\/([^/]+)$/.exec(sub);
      const file = files && m && m[1] === version ? files.get(m[2]) : undefined;
      if (!file) {
        res.writeHead(404, { "content-type": "text/plain" }).end("Not Found");
        return;
      }
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": String(statSync(file).size),
      });
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    if (server) {
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    work?.cleanup();
  });

  /**
   * Case directories hold ~100 MB each: each test removes its own when it ends. `tools` are the
   * tools the case needs beyond coreutils (and beyond curl, which almost every case downloads with).
   */
  const cases: string[] = [];
  function testCase(name: string, fn: () => Promise<void>, tools: string[] = ["curl"]) {
    const needs = toolNeeds(Object.fromEntries(tools.flatMap((t) => PACKAGES[t] ? [[t, PACKAGES[t]]] : [])));
    const req = requirements(needs, name);
    it(name, { skip: req.skip }, async () => {
      req.assertReady();
      try {
        await fn();
      } finally {
        for (const d of cases.splice(0)) rmSync(d, { recursive: true, force: true });
      }
    });
  }

  /** A fresh case directory: HOME, the install dir and a PATH of tool symlinks. */
  function caseDir(name: string) {
    const dir = path.join(work.path, `${name}-${++runs}`);
    cases.push(dir);
    mkdirSync(path.join(dir, "home"), { recursive: true });
    return {
      dir,
      home: path.join(dir, "home"),
      bin: path.join(dir, "bin"),
      /** A directory holding symlinks to exactly these tools. */
      tools(names: string[]): string {
        const t = path.join(dir, `tools-${++runs}`);
        mkdirSync(t);
        for (const n of names) symlinkSync(which(n), path.join(t, n));
        return t;
      },
    };
  }

  interface Install extends RunResult {
    requests: Request[];
  }

  /** Run install.sh from `scenario` with exactly `env` (plus HERMIT_DOWNLOAD_BASE). */
  async function install(opts: {
    scenario: string;
    env: Record<string, string>;
    shell?: string;
    input?: string;
  }): Promise<Install> {
    const run = `run${++runs}`;
    requests.set(run, []);
    const env = { HERMIT_DOWNLOAD_BASE: `http://127.0.0.1:${port}/${run}/${opts.scenario}`, ...opts.env };
    const shell = which(opts.shell ?? "sh");
    const argv = opts.shell === "busybox" ? ["sh"] : [];
    const r = await runCommand(shell, opts.input === undefined ? [...argv, script] : argv, {
      env,
      input: opts.input,
      timeoutMs: 90_000,
    });
    return { ...r, requests: requests.get(run)! };
  }

  const paths = (r: Install) => r.requests.map((q) => q.path).sort();
  const latest = (file: string) => [`/download/v${version}/${file}`, `/latest/download/${file}`];
  const errorLines = (r: Install) => r.stderr.split("\n").filter((l) => l.startsWith("error: "));

  /** The install dir holds exactly `hermit`, mode 755, the served bytes, and it runs. */
  async function assertInstalled(r: Install, dir: string, served = BIN) {
    assert.equal(r.code, 0, `install failed:\n${r.stderr}`);
    assert.equal(r.stdout, "", "install.sh writes nothing to stdout");
    assert.deepEqual(readdirSync(dir), ["hermit"], "only hermit is left in the install dir");
    const dest = path.join(dir, "hermit");
    assert.equal(statSync(dest).mode & 0o777, 0o755);
    assert.equal(sha256(dest), hashes[served], "the installed file is the served one");
    const v = await runCommand(dest, ["--version"], { env: {}, timeoutMs: 30_000 });
    assert.equal(v.code, 0, v.stderr);
    assert.equal(v.stdout.trim(), `hermit ${version}`);
    assert.ok(r.stderr.includes(`installed hermit ${version} to ${dest}\n`), r.stderr);
  }

  const pathHint = (dir: string) => `export PATH="${dir}:$PATH"`;

  for (const shell of ["sh", "dash", "busybox"]) {
    testCase(`installs the latest release with curl under ${shell}, with a PATH hint`, async () => {
      const c = caseDir(`curl-${shell}`);
      const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
      const r = await install({
        scenario: "good",
        shell,
        env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin },
      });
      await assertInstalled(r, c.bin);
      assert.deepEqual(paths(r), [...latest(BIN), ...latest("SHA256SUMS")].sort());
      assert.ok(r.requests.every((q) => q.userAgent.startsWith("curl/")), JSON.stringify(r.requests));
      assert.ok(r.stderr.includes(pathHint(c.bin)), r.stderr);
    }, ["curl", ...(shell === "sh" ? [] : [shell])]);
  }

  testCase("prints no PATH hint when the install dir is on PATH", async () => {
    const c = caseDir("onpath");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const r = await install({
      scenario: "good",
      env: { PATH: `${tools}:${c.bin}`, HOME: c.home, HERMIT_INSTALL: c.bin },
    });
    await assertInstalled(r, c.bin);
    assert.ok(!r.stderr.includes("export PATH"), r.stderr);
    assert.ok(!r.stderr.includes("not on your PATH"), r.stderr);
  });

  testCase("installs into $HOME/.local/bin by default, creating it", async () => {
    const c = caseDir("default");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const dir = path.join(c.home, ".local", "bin");
    assert.ok(!existsSync(path.join(c.home, ".local")));
    const r = await install({ scenario: "good", env: { PATH: tools, HOME: c.home } });
    await assertInstalled(r, dir);
    assert.ok(r.stderr.includes(pathHint(dir)), r.stderr);
    assert.deepEqual(readdirSync(c.home), [".local"], "no shell profile is created or edited");
  });

  for (const v of [version, `v${version}`]) {
    testCase(`HERMIT_VERSION=${v} fetches from /download/v${version}/`, async () => {
      const c = caseDir("version");
      const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
      const r = await install({
        scenario: "good",
        env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin, HERMIT_VERSION: v },
      });
      await assertInstalled(r, c.bin);
      assert.deepEqual(paths(r), [`/download/v${version}/${BIN}`, `/download/v${version}/SHA256SUMS`].sort());
    });
  }

  testCase("fails cleanly on a version that does not exist, and on a malformed one", async () => {
    const c = caseDir("noversion");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const missing = await install({
      scenario: "good",
      env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin, HERMIT_VERSION: "v99.0.0" },
    });
    assert.notEqual(missing.code, 0);
    assert.equal(errorLines(missing).length, 1, missing.stderr);
    assert.ok(errorLines(missing)[0].includes(`/download/v99.0.0/${BIN}`), missing.stderr);
    assert.deepEqual(readdirSync(c.bin), [], "nothing installed, no temp files");

    const bad = await install({
      scenario: "good",
      env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin, HERMIT_VERSION: "1.0;rm" },
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /^error: invalid HERMIT_VERSION '1\.0;rm'/m);
    assert.deepEqual(bad.requests, []);
  });

  testCase("uses wget when curl is not on PATH", async () => {
    const c = caseDir("wget");
    const tools = c.tools([...BASE_TOOLS, "wget", "sha256sum"]);
    const r = await install({ scenario: "good", env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin } });
    await assertInstalled(r, c.bin);
    assert.deepEqual(paths(r), [...latest(BIN), ...latest("SHA256SUMS")].sort());
    assert.ok(r.requests.every((q) => /wget/i.test(q.userAgent)), JSON.stringify(r.requests));
  }, ["wget"]);

  testCase("says so when neither curl nor wget exists", async () => {
    const c = caseDir("nofetch");
    const tools = c.tools([...BASE_TOOLS, "sha256sum"]);
    const r = await install({ scenario: "good", env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin } });
    assert.notEqual(r.code, 0);
    assert.deepEqual(errorLines(r), [
      "error: neither curl nor wget is installed; install one of them and run this again",
    ]);
    assert.deepEqual(r.requests, []);
    assert.ok(!existsSync(c.bin), "nothing created");
  }, []);

  for (const hasher of ["sha256sum", "shasum", "openssl"]) {
    testCase(`verifies with ${hasher} alone: installs the right file, refuses a corrupted one`, async () => {
      const c = caseDir(`hash-${hasher}`);
      const tools = c.tools([...BASE_TOOLS, "curl", hasher]);
      const env = { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin };
      const bad = await install({ scenario: "corrupt", env });
      assert.notEqual(bad.code, 0);
      assert.deepEqual(errorLines(bad), [
        `error: checksum mismatch for ${BIN}: expected ${
          hashes[BIN]
        }, got ${hashes.corrupt}; refusing to install it`,
      ]);
      assert.deepEqual(readdirSync(c.bin), [], "nothing installed, no temp files");
      await assertInstalled(await install({ scenario: "good", env }), c.bin);
    }, ["curl", hasher]);
  }

  testCase("refuses when no hash tool exists", async () => {
    const c = caseDir("nohash");
    const tools = c.tools([...BASE_TOOLS, "curl"]);
    const r = await install({ scenario: "good", env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin } });
    assert.notEqual(r.code, 0);
    assert.deepEqual(errorLines(r), ["error: need sha256sum, shasum or openssl to verify the download"]);
    assert.deepEqual(r.requests, [], "refused before downloading");
    assert.ok(!existsSync(c.bin), "nothing created");
  });

  testCase(
    "refuses a corrupted binary: error names the file and both hashes, nothing left behind",
    async () => {
      const c = caseDir("corrupt");
      const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
      const r = await install({
        scenario: "corrupt",
        env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin },
      });
      assert.notEqual(r.code, 0);
      assert.equal(r.stdout, "");
      const errors = errorLines(r);
      assert.equal(errors.length, 1, r.stderr);
      for (const s of [BIN, hashes[BIN], hashes.corrupt]) assert.ok(errors[0].includes(s), errors[0]);
      assert.ok(!r.stderr.includes("installed hermit"), r.stderr);
      assert.deepEqual(readdirSync(c.bin), [], "nothing at the target path, no temp files");
    },
  );

  testCase("refuses when SHA256SUMS has no line for the file", async () => {
    const c = caseDir("nosum");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const r = await install({ scenario: "nosum", env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin } });
    assert.notEqual(r.code, 0);
    assert.deepEqual(errorLines(r), [`error: SHA256SUMS has no entry for ${BIN}; refusing to install it`]);
    assert.deepEqual(readdirSync(c.bin), []);
  });

  testCase("runs nothing when the script is cut short anywhere (curl | sh)", async () => {
    const c = caseDir("truncated");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const env = { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin };
    const text = readFileSync(script, "utf8");
    const start = text.indexOf("\nmain() {\n") + 1; // main's first line
    const call = text.lastIndexOf('\nmain "$@"\n');
    assert.ok(start > 1 && call > start, "install.sh defines main() and calls it on its last line");
    assert.equal(text.slice(call), '\nmain "$@"\n', "the call is the last line");
    const end = text.lastIndexOf("\n}\n", call) + 1; // main's closing brace
    // Every line boundary up to just before the call, plus a cut inside every line.
    const cuts: number[] = [];
    for (let i = text.indexOf("\n"); i >= 0 && i <= call; i = text.indexOf("\n", i + 1)) {
      cuts.push(i + 1);
      if (i + 20 < call) cuts.push(i + 20);
    }
    assert.ok(cuts.length > 200, `install.sh is not that short: ${cuts.length} cuts`);
    for (const cut of cuts) {
      const r = await install({ scenario: "good", env, input: text.slice(0, cut) });
      if (cut > start && cut <= end) assert.notEqual(r.code, 0, `cut at ${cut} (in main): a syntax error`);
      assert.deepEqual(r.requests, [], `cut at ${cut}: no request`);
      assert.equal(r.stdout, "");
      assert.ok(!existsSync(c.bin), `cut at ${cut}: nothing created`);
      assert.deepEqual(readdirSync(c.home), []);
    }
    // The same input, whole, does install: the cuts above are what stopped it.
    await assertInstalled(await install({ scenario: "good", env, input: text }), c.bin);
  });

  testCase("HERMIT_TARGET=linux-x64-musl fetches and verifies the musl build", async () => {
    const c = caseDir("musl");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const r = await install({
      scenario: "good",
      env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin, HERMIT_TARGET: "linux-x64-musl" },
    });
    assert.deepEqual(paths(r), [...latest(MUSL), ...latest("SHA256SUMS")].sort());
    await assertInstalled(r, c.bin, BIN); // the same bytes, served under the musl name
    // A SHA256SUMS that lists only the musl file is enough for it (the default target is refused
    // against the same file, see "no line for the file": the lookup is by exact name).
    const d = caseDir("musl-only");
    const only = await install({
      scenario: "nosum",
      env: { PATH: tools, HOME: d.home, HERMIT_INSTALL: d.bin, HERMIT_TARGET: "linux-x64-musl" },
    });
    await assertInstalled(only, d.bin, BIN);
  });

  testCase("HERMIT_TARGET=windows-x64 installs hermit.exe, warning that it does not run here", async () => {
    const c = caseDir("windows");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const r = await install({
      scenario: "good",
      env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin, HERMIT_TARGET: "windows-x64" },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(paths(r), [...latest(WIN), ...latest("SHA256SUMS")].sort());
    assert.deepEqual(readdirSync(c.bin), ["hermit.exe"]);
    assert.equal(sha256(path.join(c.bin, "hermit.exe")), hashes.windows);
    assert.match(
      r.stderr,
      new RegExp(`^warning: ${WIN.replace(".", "\\.")} does not run on this machine`, "m"),
    );
  });

  // Detection from uname (and sysctl on macOS, ldd on Linux), with stand-ins for those tools
  // playing other machines; the target shows in the first request (404 here: nothing served).
  const machines: { os: string; arch: string; rosetta?: string; musl?: boolean; want: string }[] = [
    { os: "Linux", arch: "x86_64", want: BIN },
    { os: "Linux", arch: "aarch64", want: "hermit-linux-arm64" },
    { os: "Linux", arch: "x86_64", musl: true, want: MUSL },
    { os: "Linux", arch: "aarch64", musl: true, want: "error: no hermit build for musl on arm64" },
    { os: "Darwin", arch: "arm64", want: "hermit-darwin-arm64" },
    { os: "Darwin", arch: "x86_64", rosetta: "0", want: "hermit-darwin-x64" },
    { os: "Darwin", arch: "x86_64", rosetta: "1", want: "hermit-darwin-arm64" },
    { os: "MINGW64_NT-10.0-19045", arch: "x86_64", want: WIN },
    { os: "MSYS_NT-10.0-19045", arch: "x86_64", want: WIN },
    { os: "CYGWIN_NT-10.0", arch: "amd64", want: WIN },
    { os: "FreeBSD", arch: "amd64", want: "error: unsupported operating system: FreeBSD" },
    { os: "Linux", arch: "riscv64", want: "error: unsupported CPU architecture: riscv64" },
  ];
  testCase("detects the platform from uname, sysctl (Rosetta) and ldd (musl)", async () => {
    const c = caseDir("detect");
    for (const m of machines) {
      const tools = c.tools(["mkdir", "chmod", "mv", "rm", "curl", "sha256sum"]);
      const stub = (name: string, body: string) =>
        writeFileSync(path.join(tools, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      stub("uname", `case $1 in -s) echo '${m.os}' ;; -m) echo '${m.arch}' ;; *) exit 1 ;; esac`);
      stub("ldd", m.musl ? "echo 'musl libc (x86_64)' >&2; exit 1" : "echo 'ldd (GNU libc) 2.36'");
      if (m.rosetta) stub("sysctl", `[ "$*" = "-n sysctl.proc_translated" ] && echo ${m.rosetta}`);
      const r = await install({
        scenario: "none",
        env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin },
      });
      const what = `${m.os} ${m.arch}${m.musl ? " musl" : ""}${m.rosetta ? ` rosetta=${m.rosetta}` : ""}`;
      assert.notEqual(r.code, 0, what);
      if (m.want.startsWith("error: ")) {
        assert.equal(errorLines(r).length, 1, `${what}: ${r.stderr}`);
        assert.ok(errorLines(r)[0].startsWith(m.want), `${what}: ${r.stderr}`);
        assert.deepEqual(r.requests, [], what);
      } else {
        assert.equal(r.requests[0]?.path, `/latest/download/${m.want}`, `${what}: ${r.stderr}`);
        const errors = errorLines(r);
        assert.equal(errors.length, 1, `${what}: ${r.stderr}`);
        assert.match(errors[0], /^error: download failed: http:\/\/127\.0\.0\.1:\d+\//, what);
        assert.ok(errors[0].endsWith(`/none/latest/download/${m.want}`), `${what}: ${errors[0]}`);
      }
    }
    // HERMIT_TARGET wins over whatever uname says.
    const tools = c.tools(["mkdir", "chmod", "mv", "rm", "curl", "sha256sum"]);
    writeFileSync(path.join(tools, "uname"), "#!/bin/sh\necho FreeBSD\n", { mode: 0o755 });
    const r = await install({
      scenario: "none",
      env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin, HERMIT_TARGET: "darwin-x64" },
    });
    assert.equal(r.requests[0]?.path, "/latest/download/hermit-darwin-x64", r.stderr);
  });

  testCase("rejects an unknown HERMIT_TARGET before touching anything", async () => {
    const c = caseDir("badtarget");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const r = await install({
      scenario: "good",
      env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin, HERMIT_TARGET: "linux-mips" },
    });
    assert.notEqual(r.code, 0);
    const errors = errorLines(r);
    assert.equal(errors.length, 1, r.stderr);
    assert.ok(errors[0].startsWith("error: unknown HERMIT_TARGET 'linux-mips'"), errors[0]);
    for (
      const t of ["linux-x64", "linux-arm64", "linux-x64-musl", "darwin-x64", "darwin-arm64", "windows-x64"]
    ) {
      assert.ok(errors[0].includes(t), errors[0]);
    }
    assert.deepEqual(r.requests, []);
    assert.ok(!existsSync(c.bin));
  });

  /** An older hermit in the install dir, plus a hard link to it elsewhere to watch its inode. */
  function oldHermit(c: ReturnType<typeof caseDir>) {
    mkdirSync(c.bin);
    const dest = path.join(c.bin, "hermit");
    const text = "#!/bin/sh\necho 'hermit 0.0.1'\n";
    writeFileSync(dest, text, { mode: 0o755 });
    const keep = path.join(c.dir, "old-hermit");
    linkSync(dest, keep);
    return { dest, text, keep, ino: statSync(dest).ino, size: statSync(dest).size };
  }

  testCase("replaces an existing hermit atomically", async () => {
    const c = caseDir("replace");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const old = oldHermit(c);
    const newSize = statSync(path.join(release, BIN)).size;
    // Watch the destination while the installer runs: it must always be the whole old file or
    // the whole new one (never missing, never partly written).
    let done = false;
    const seen = new Set<string>();
    const watch = (async () => {
      while (!done) {
        try {
          const s = statSync(old.dest);
          seen.add(s.ino === old.ino ? `old:${s.size}` : `new:${s.size}`);
        } catch {
          seen.add("missing");
        }
        await sleep(1);
      }
    })();
    const r = await install({ scenario: "good", env: { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin } })
      .finally(() => (done = true));
    await watch;
    await assertInstalled(r, c.bin);
    assert.notEqual(statSync(old.dest).ino, old.ino, "a new file was moved into place");
    assert.equal(readFileSync(old.keep, "utf8"), old.text, "the old file was never written to");
    seen.delete(`old:${old.size}`);
    seen.delete(`new:${newSize}`);
    assert.deepEqual([...seen], [], "no other state of the destination was ever visible");
  });

  testCase("leaves an existing hermit untouched when the new one is refused or does not run", async () => {
    const c = caseDir("keep");
    const tools = c.tools([...BASE_TOOLS, "curl", "sha256sum"]);
    const old = oldHermit(c);
    const env = { PATH: tools, HOME: c.home, HERMIT_INSTALL: c.bin };
    const corrupt = await install({ scenario: "corrupt", env });
    assert.notEqual(corrupt.code, 0);
    assert.match(corrupt.stderr, /^error: checksum mismatch for hermit-linux-x64/m);
    // A build that passes the checksum but cannot run on this (detected) platform is refused too.
    const broken = await install({ scenario: "broken", env });
    assert.notEqual(broken.code, 0);
    assert.deepEqual(errorLines(broken), [
      `error: ${BIN} does not run on this machine (detected linux-x64; set HERMIT_TARGET if wrong): ` +
      "broken: cannot execute binary file",
    ]);
    for (const r of [corrupt, broken]) assert.ok(!r.stderr.includes("installed "), r.stderr);
    assert.deepEqual(readdirSync(c.bin), ["hermit"], "no temp files");
    assert.equal(statSync(old.dest).ino, old.ino);
    assert.equal(readFileSync(old.dest, "utf8"), old.text);
  });
});
