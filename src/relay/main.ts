/**
 * The relay's fast path: `hermit serve DIR [--serve-url URL] [--token-file FILE]` for a standalone
 * adapter, answered without the command-line app, the MCP SDK, zod or the YAML parser, because a
 * relay runs once per host session and what it loads is what it costs. The manifest comes from
 * the stored copy its exact bytes map to (`plan.ts`). Whenever this path is not sure — other
 * arguments, no stored copy, a session adapter, anything unreadable, `HERMIT_SAFE_MODE` — it
 * returns undefined and
 * `src/main.ts` runs the full app, which says what is wrong the usual way (and stores the copy).
 * Once sure, the compiled binary re-executes itself without the JIT (`platform/no_jit.ts`). The
 * hidden `--launch-service` runs the launcher such a relay starts (`launcher.ts`) instead.
 * Errors are rendered as the app renders them: `error: …` lines on stderr, the error's exit code.
 */
import { readFileSync, statSync } from "node:fs";
import process from "node:process";
import { HermitError, messageOf } from "../errors.ts";
import { safeMode } from "../gates/safe_mode.ts";
import { terminalSafe } from "../gates/terminal_text.ts";
import { setLogSink } from "../log.ts";
import { resolveManifestPath } from "../manifest/paths.ts";
import type { Manifest } from "../manifest/types.ts";
import { withoutJit } from "../platform/no_jit.ts";
import { readToken, TOKEN_VAR } from "../service/access.ts";
import { stderrText, stdoutLines } from "./io.ts";
import { LAUNCH_FLAG } from "./launcher.ts";
import { recallManifest } from "./plan.ts";

interface RelayArgs {
  dir: string;
  serveUrl?: string;
  tokenFile?: string;
  warmStart: boolean;
  /** `--launch-service` (hidden): find or launch the service, say how on stdout, exit (`launcher.ts`). */
  launchOnly: boolean;
}

/** The arguments after `serve`, when they are exactly a relay's; undefined otherwise. */
export function relayArgs(argv: readonly string[]): RelayArgs | undefined {
  const out: RelayArgs = { dir: ".", warmStart: true, launchOnly: false };
  let positional = 0;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.startsWith("--") && a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === "--serve-url" || flag === "--token-file") {
      const v = value();
      if (v === undefined || v === "" || v.startsWith("-")) return undefined;
      if (flag === "--serve-url") out.serveUrl = v;
      else out.tokenFile = v;
    } else if (a === "--no-warm-start") out.warmStart = false;
    else if (a === LAUNCH_FLAG) out.launchOnly = true;
    else if (a.startsWith("-") || ++positional > 1) return undefined;
    else out.dir = a;
  }
  if (out.tokenFile !== undefined && out.serveUrl === undefined) return undefined; // the app says why
  if (out.launchOnly && out.serveUrl !== undefined) return undefined;
  return out;
}

/** The stored manifest for `dir` when its bytes are unchanged; undefined for any doubt. */
function knownManifest(dir: string): Manifest | undefined {
  try {
    const { file } = resolveManifestPath(dir);
    if (!statSync(file).isFile()) return undefined; // a FIFO would block the read: the app says why
    return recallManifest(file, readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * A relay's work per message is small and it mostly waits: under Bun, tier code up to the
 * optimizing JITs far later than usual, which keeps their compiled code (several MiB) out of a
 * process that runs once per host session.
 */
function lessJit(): void {
  (globalThis as { Bun?: { unsafe?: { setJITPolicy?(scale: number): void } } }).Bun?.unsafe?.setJITPolicy?.(
    1000,
  );
}

/** Run the relay if this is a relay's command line for a known standalone adapter; else undefined. */
export async function relayFastPath(argv: readonly string[]): Promise<number | undefined> {
  // the kill switch is this session's: it serves nothing, whatever a running service offers
  if (safeMode(process.env)) return undefined;
  const args = relayArgs(argv);
  const m = args && knownManifest(args.dir);
  if (!args || !m) return undefined;
  if (args.serveUrl === undefined && m.serve.lifecycle !== "standalone") return undefined;
  // the launcher takes the lock through the FFI, which needs the JIT
  if (!args.launchOnly && !withoutJit()) lessJit(); // where the process cannot drop its JIT, it keeps it idle
  const stderr = stderrText();
  setLogSink(stderr.write);
  try {
    if (args.launchOnly) {
      const out = stdoutLines();
      const code = await (await import("./launcher.ts")).launchServiceMain(m, out.write);
      await out.drain();
      return code;
    }
    if (args.serveUrl !== undefined) {
      const token = args.tokenFile ? readToken(args.tokenFile) : process.env[TOKEN_VAR] || undefined;
      const { relayTo } = await import("./targets.ts");
      return await relayTo(m, args.serveUrl, token);
    }
    const { relayToLocal } = await import("./targets.ts");
    return await relayToLocal(m, args.warmStart);
  } catch (err) {
    const [lines, code] = err instanceof HermitError
      ? [err.message.split("\n").map((l) => `error: ${l}\n`).join(""), err.exitCode]
      : [`error: unexpected: ${messageOf(err)}\n`, 1];
    stderr.write(terminalSafe(lines)); // a service's log tail may be in it
    await stderr.drain();
    return code;
  } finally {
    await stderr.drain();
  }
}
