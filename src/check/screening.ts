/** Gate 1 and gate 7 as `check` findings: refused entries and the kill switch. */
import { refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Finding } from "./static.ts";

export function screeningFindings(m: Manifest): Finding[] {
  const refusals = screenManifest(m);
  if (refusals.length === 0) {
    const n = Object.keys(m.upstreams).length + Object.keys(m.tools).length;
    return n ? [{ level: "ok", area: "screening", message: `${n} entries pass config screening` }] : [];
  }
  return refusals.map((r) => ({ level: "problem", area: "screening", message: refusalLine(r) }));
}
