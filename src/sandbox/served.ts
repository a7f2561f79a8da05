/**
 * Which adapters' `.serve/` directories to protect: every adapter hermit has started a gateway
 * for on this machine is recorded (one absolute path per line, appended, in hermit's state
 * directory: `sandbox/adapters`), so a child of one adapter cannot read another adapter's
 * service token either. The file is append-only (concurrent hermits lose nothing) and rewritten
 * without the directories that are gone once it grows past a few hundred lines.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../platform/atomic_write.ts";

const MAX_LINES = 500;

export function servedFile(stateDir: string): string {
  return path.join(stateDir, "sandbox", "adapters");
}

/** The recorded adapter directories (deduplicated, in first-seen order). Pure over the text. */
export function parseServed(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split("\n")) if (line.startsWith("/")) out.add(line.trim());
  return [...out];
}

/** Record `adapterDir` (when it is new) and return every recorded directory that still exists. */
export function recordServed(stateDir: string, adapterDir: string): string[] {
  const file = servedFile(stateDir);
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch { /* first one */ }
  const known = parseServed(text);
  try {
    if (!known.includes(adapterDir)) {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      appendFileSync(file, adapterDir + "\n", { mode: 0o600 });
      known.push(adapterDir);
    }
    if (text.split("\n").length > MAX_LINES) {
      writeFileAtomic(file, known.filter((d) => existsSync(d)).join("\n") + "\n");
    }
  } catch {
    // a read-only state directory: protect what is known
  }
  return known.filter((d) => d === adapterDir || existsSync(d));
}
