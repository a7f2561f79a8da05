/**
 * What a test needs from the machine (an OS tool, root, a host CLI) and what happens when it is
 * missing: outside CI the test is skipped with its reason, and the skip is recorded (one JSON
 * line in the file HERMIT_TEST_SKIPS names, which `deno task test` sets per runtime) so the run
 * ends with one summary of what was skipped, why, and the one command that installs it all; under
 * CI (`CI` set) nothing is skipped and `assertReady()` fails the test with the fix instead.
 *
 * The summary itself (`skipSummary`) is here too, next to the record format it reads.
 */
import { execFileSync } from "node:child_process";
import { accessSync, appendFileSync, constants, readFileSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export const CI = Boolean(process.env.CI);

/** The one command that installs every OS package and host CLI the tests use (CI runs it too). */
export const INSTALL_COMMAND = "scripts/install-test-deps.sh";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** An executable on PATH (or in `extra` directories), as an absolute path. */
export function findTool(name: string, extra: string[] = []): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(path.delimiter), ...extra]) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      if (statSync(p).isFile()) return p;
    } catch { /* not here */ }
  }
  return undefined;
}

export interface Need {
  what: string;
  ok: boolean;
  /** How to get it, e.g. "apt-get install -y qemu-user". */
  fix: string;
}

/** One skipped test or suite, as recorded for the run's summary. */
export interface SkipRecord {
  /** The test file, relative to the repository (e.g. tests/e2e/release.test.ts). */
  file: string;
  /** The test or suite, when the caller named it. */
  test?: string;
  what: string;
  fix: string;
}

/**
 * A suite's (or a test's) prerequisites. `skip` is the reason to skip (outside CI) or false; under
 * CI nothing is skipped and `assertReady()`, called first thing in the suite's `before` (or the
 * test), fails it with the fix instead. `test` names what is skipped in the run's summary.
 */
export function requirements(needs: Need[], test?: string): { skip: string | false; assertReady(): void } {
  const missing = needs.filter((n) => !n.ok);
  const reason = missing.map((n) => `${n.what} is missing (${n.fix})`).join("; ");
  if (missing.length > 0 && !CI) record(missing, test);
  return {
    skip: missing.length > 0 && !CI ? `${reason}; ${INSTALL_COMMAND} installs it` : false,
    assertReady() {
      if (missing.length > 0) throw new Error(`${reason}; ${INSTALL_COMMAND} installs it and CI requires it`);
    },
  };
}

/** Needs for tools found on PATH, each with the Debian package that provides it. */
export function toolNeeds(packages: Record<string, string>): Need[] {
  return Object.entries(packages).map(([tool, pkg]) => ({
    what: tool,
    ok: findTool(tool) !== undefined,
    fix: `apt-get install -y ${pkg}`,
  }));
}

/** util-linux `script`, which runs a command in a pseudo-terminal (tests of what a person at a terminal sees). */
export function scriptNeed(): Need {
  let ok = false;
  try {
    ok = execFileSync("script", ["--version"], { encoding: "utf8" }).includes("util-linux");
  } catch { /* no script */ }
  return { what: "script (util-linux)", ok, fix: "apt-get install -y util-linux" };
}

function record(missing: Need[], test: string | undefined): void {
  const file = callerFile();
  const lines = missing.map((n) =>
    JSON.stringify({ file, test, what: n.what, fix: n.fix } satisfies SkipRecord)
  );
  const out = process.env.HERMIT_TEST_SKIPS;
  if (out) {
    appendFileSync(out, lines.join("\n") + "\n");
    return;
  }
  // Run without `deno task test` (no summary): say it here, once per skip.
  for (const n of missing) {
    process.stderr.write(`skipped ${file}${test ? ` (${test})` : ""}: ${n.what} is missing (${n.fix})\n`);
  }
}

/** The test file that called requirements(): the first stack frame under tests/ outside helpers/. */
function callerFile(): string {
  const stack = new Error().stack ?? "";
  for (const m of stack.matchAll(/(?:file:\/\/)?(\/[^\s():]+\.ts)/g)) {
    const rel = path.relative(root, m[1]).split(path.sep).join("/");
    if (rel.startsWith("tests/") && !rel.startsWith("tests/helpers/")) return rel;
  }
  return "a test file";
}

/** The records in `file` (JSON lines; a missing file means nothing was skipped). */
export function readSkips(file: string): SkipRecord[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text.split("\n").filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l) as SkipRecord];
    } catch {
      return [];
    }
  });
}

/**
 * The end-of-run summary, one block whatever the runtimes: per fix (an install command) what is
 * missing and the test files it skipped, a note where only some runtimes skipped one, and the
 * command that installs it all. Empty when nothing was skipped.
 */
export function skipSummary(byRuntime: Record<string, SkipRecord[]>): string {
  const runtimes = Object.keys(byRuntime);
  const groups = new Map<string, { whats: Set<string>; files: Map<string, Set<string>> }>();
  for (const [runtime, records] of Object.entries(byRuntime)) {
    for (const r of records) {
      const g = groups.get(r.fix) ?? { whats: new Set<string>(), files: new Map() };
      groups.set(r.fix, g);
      g.whats.add(r.what);
      const shown = r.test ? `${r.file} (${r.test})` : r.file;
      const where = g.files.get(shown) ?? new Set<string>();
      where.add(runtime);
      g.files.set(shown, where);
    }
  }
  if (groups.size === 0) return "";
  const files = new Set([...groups.values()].flatMap((g) => [...g.files.keys()].map((f) => f.split(" ")[0])));
  const lines = [
    `skipped: ${files.size} test file${files.size === 1 ? "" : "s"} need${
      files.size === 1 ? "s" : ""
    } what this machine lacks (CI installs it and fails without it):`,
  ];
  for (const [fix, g] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const whats = [...g.whats].sort();
    const missing = whats.length === 1
      ? `${whats[0]} is missing`
      : `${whats.slice(0, -1).join(", ")} and ${whats.at(-1)} are missing`;
    lines.push(`  ${missing} (${fix}):`);
    for (const [file, where] of [...g.files].sort(([a], [b]) => a.localeCompare(b))) {
      const only = where.size < runtimes.length ? ` [${[...where].sort().join(", ")} only]` : "";
      lines.push(`    ${file}${only}`);
    }
  }
  lines.push(`install all of it (Debian packages and the host CLIs, as CI does): ${INSTALL_COMMAND}`);
  return lines.join("\n") + "\n";
}
