/**
 * `hermit serve DIR` with no options: what a host runs at every session start, so it loads only
 * what serving needs (no command-line parser, no other command). A session adapter is served
 * over stdio; a standalone one gets a relay to its shared service. The command-line app's `serve`
 * and main.ts's fast path both end here.
 */
import process from "node:process";
import { errorReport } from "../errors.ts";
import { safeMode } from "../gates/safe_mode.ts";
import { loadManifest } from "../manifest/load.ts";
import type { Manifest } from "../manifest/types.ts";
import { writeErr, writeOut } from "./output.ts";

/**
 * Serve a loaded adapter: the relay for a standalone one, stdio for a session one. A standalone
 * adapter's manifest was loaded the slow way because the relay's fast path had no copy of it (the
 * file changed, or hermit did, since one was stored): store one, so the next relay takes that path.
 * Under `HERMIT_SAFE_MODE` nothing is relayed: the session is served here, and serves nothing.
 */
export async function serveAdapter(manifest: Manifest, warmStart = true): Promise<number> {
  if (manifest.serve.lifecycle === "standalone" && !safeMode(process.env)) {
    await (await import("../relay/plan.ts")).rememberManifest(manifest);
    const { relayToLocal } = await import("../relay/targets.ts");
    return await relayToLocal(manifest, warmStart);
  }
  const { serveStdio } = await import("../mcp/session.ts");
  return await serveStdio(manifest);
}

/** main.ts's fast path: load, serve, and report an error the way the command-line app does. */
export async function serveDir(dir: string): Promise<number> {
  let code: number;
  try {
    code = await serveAdapter(loadManifest(dir));
  } catch (err) {
    const report = errorReport(err);
    writeErr(report.text);
    code = report.code;
  }
  await writeOut("");
  return code;
}
