/**
 * Builds the hermit executable.
 *
 *   deno task build                 dist/hermit for this machine
 *   deno task build --all           dist/hermit-<os>-<arch>[.exe] for every release target + SHA256SUMS
 *   deno task build --target T      one release target (e.g. linux-arm64)
 *   deno task build --out DIR       write into DIR instead of dist/ (created if missing)
 *   deno task build --compiler X    force `deno` or `bun` (default: deno when its runtime base can
 *                                   be downloaded, bun otherwise)
 *
 * `deno compile` fetches a runtime base (denort) from dl.deno.land, which is unreachable on
 * machines that only reach the npm registry; `bun build --compile` carries its runtime and
 * cross-compiles offline, so it is the fallback. The build prints which one it used.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

interface Target {
  name: string;
  bun: string;
  deno?: string;
  exe: boolean;
}

export const TARGETS: Target[] = [
  { name: "linux-x64", bun: "bun-linux-x64", deno: "x86_64-unknown-linux-gnu", exe: false },
  { name: "linux-arm64", bun: "bun-linux-arm64", deno: "aarch64-unknown-linux-gnu", exe: false },
  { name: "linux-x64-musl", bun: "bun-linux-x64-musl", exe: false },
  { name: "darwin-x64", bun: "bun-darwin-x64", deno: "x86_64-apple-darwin", exe: false },
  { name: "darwin-arm64", bun: "bun-darwin-arm64", deno: "aarch64-apple-darwin", exe: false },
  { name: "windows-x64", bun: "bun-windows-x64", deno: "x86_64-pc-windows-msvc", exe: true },
];

const root = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(root, "src", "main.ts");
const version: string = JSON.parse(readFileSync(path.join(root, "deno.json"), "utf8")).version;
const denoVersion = (globalThis as unknown as { Deno?: { version: { deno: string } } }).Deno?.version.deno;

function parseArgs(argv: string[]) {
  const out: { all: boolean; target?: string; compiler?: string; out: string } = {
    all: false,
    out: path.join(root, "dist"),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--all") out.all = true;
    else if (a === "--target") out.target = argv[++i];
    else if (a === "--compiler") out.compiler = argv[++i];
    else if (a === "--out" && argv[i + 1]) out.out = path.resolve(argv[++i]);
    else fail(`unknown argument '${a}'; use --all, --target NAME, --out DIR or --compiler deno|bun`);
  }
  if (out.compiler && out.compiler !== "deno" && out.compiler !== "bun") {
    fail("--compiler must be deno or bun");
  }
  if (out.target && !TARGETS.some((t) => t.name === out.target)) {
    fail(`unknown target '${out.target}'; one of ${TARGETS.map((t) => t.name).join(", ")}`);
  }
  return out;
}

function fail(message: string): never {
  console.error(`build: error: ${message}`);
  process.exit(2);
}

function hostTarget(): Target {
  const os = process.platform === "win32" ? "windows" : process.platform;
  const arch = process.arch === "x64" ? "x64" : process.arch === "arm64" ? "arm64" : process.arch;
  let name = `${os}-${arch}`;
  if (os === "linux" && isMusl()) name += "-musl";
  const t = TARGETS.find((x) => x.name === name);
  if (!t) fail(`this machine (${name}) is not a release target`);
  return t;
}

/** Does this machine's toolchain run on musl? Ask the loader mapped into this very process. */
function isMusl(): boolean {
  try {
    return readFileSync("/proc/self/maps", "utf8").includes("ld-musl");
  } catch {
    return false;
  }
}

/** Can `deno compile` get its runtime base? (DENORT_BIN set, or dl.deno.land answers.) */
async function denoCompileAvailable(): Promise<boolean> {
  if (!denoVersion) return false;
  if (process.env.DENORT_BIN) return true;
  try {
    const url = `https://dl.deno.land/release/v${denoVersion}/denort-x86_64-unknown-linux-gnu.zip`;
    const res = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(4000) });
    return res.ok;
  } catch {
    return false;
  }
}

function bunBin(): string {
  const local = path.join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
  return existsSync(local) ? local : "bun";
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], cwd: root });
  if (r.status !== 0) {
    fail(`${path.basename(cmd)} ${args.slice(0, 3).join(" ")} … failed (exit ${r.status ?? r.signal})`);
  }
}

/**
 * The bytecode profiles `scripts/record_bytecode_order.ts` records (a relay attaching, a relay
 * launching its service; most common first): the bytecode they use is laid out together, so a
 * relay faults in less of the executable.
 */
function bytecodeOrder(): string[] {
  const dir = path.join(root, "scripts", "bytecode-order");
  const files = ["relay-attach.order", "relay-launch.order"].map((f) => path.join(dir, f)).filter(existsSync);
  return files.length > 0 ? [`--bytecode-order=${files.join(",")}`] : [];
}

function compile(compiler: "deno" | "bun", target: Target, outfile: string): void {
  const tmp = outfile + ".tmp";
  rmSync(tmp, { force: true });
  if (compiler === "bun") {
    run(bunBin(), [
      "build",
      "--compile",
      "--minify",
      "--bytecode",
      ...bytecodeOrder(),
      "--splitting",
      "--format=esm",
      // one chunk per dynamic import: a command loads (and pays memory for) only its own code
      "--splitting",
      // functions nested deeper than three levels are compiled at their first call instead: the
      // binary stays smaller (measured: start-up and memory unchanged)
      "--bytecode-depth=3",
      // a compiled bun reads bunfig.toml (its `preload` runs code) and .env files from the working
      // directory, which is the user's project (hosts start `hermit serve` there): never
      "--no-compile-autoload-bunfig",
      "--no-compile-autoload-dotenv",
      "--no-compile-autoload-tsconfig",
      "--no-compile-autoload-package-json",
      // yaml as ES modules (its browser build, the same code): only the parts hermit uses are
      // bundled, 65 KB less (scripts/bundle-tsconfig.json)
      `--tsconfig-override=${path.join(root, "scripts", "bundle-tsconfig.json")}`,
      `--target=${target.bun}`,
      entry,
      "--outfile",
      tmp,
    ]);
  } else {
    run(process.execPath, [
      "compile",
      "-A",
      "--no-check",
      "--target",
      target.deno!,
      "--include",
      path.join(root, "deno.json"),
      "--output",
      tmp,
      entry,
    ]);
  }
  // bun appends .exe for Windows targets; deno does too
  const produced = existsSync(tmp) ? tmp : tmp + ".exe";
  renameSync(produced, outfile);
  if (!target.exe) chmodSync(outfile, 0o755);
}

/** `out` relative to the repository when inside it (dist/hermit), absolute otherwise. */
function shown(out: string): string {
  const rel = path.relative(root, out);
  return rel.startsWith("..") ? out : rel;
}

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const wantDeno = args.compiler === "deno" || (!args.compiler && await denoCompileAvailable());
  const dist = args.out;
  mkdirSync(dist, { recursive: true });
  const jobs: { target: Target; out: string }[] = args.all
    ? TARGETS.map((t) => ({ target: t, out: path.join(dist, `hermit-${t.name}${t.exe ? ".exe" : ""}`) }))
    : args.target
    ? [TARGETS.find((t) => t.name === args.target)!].map((t) => ({
      target: t,
      out: path.join(dist, `hermit-${t.name}${t.exe ? ".exe" : ""}`),
    }))
    : [{
      target: hostTarget(),
      out: path.join(dist, process.platform === "win32" ? "hermit.exe" : "hermit"),
    }];

  for (const { target, out } of jobs) {
    const compiler = wantDeno && target.deno ? "deno" : "bun";
    const t0 = performance.now();
    compile(compiler, target, out);
    const mb = (statSync(out).size / 1048576).toFixed(1);
    console.error(
      `build: ${shown(out)} (${target.name}, ${mb} MiB) with ${
        compiler === "deno" ? `deno compile ${denoVersion}` : "bun build --compile"
      } in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  }
  if (args.all) {
    const lines = jobs.map(({ out }) => `${sha256(out)}  ${path.basename(out)}`);
    writeFileSync(path.join(dist, "SHA256SUMS"), lines.join("\n") + "\n");
    // the installer is published next to the binaries (it verifies them against SHA256SUMS)
    copyFileSync(path.join(root, "install.sh"), path.join(dist, "install.sh"));
    console.error(
      `build: ${shown(path.join(dist, "SHA256SUMS"))} (${lines.length} files), hermit ${version}`,
    );
  }
  if (!wantDeno) {
    console.error("build: used bun: deno compile's runtime base (dl.deno.land) is not reachable from here");
  }
}

await main();
