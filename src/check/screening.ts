/**
 * Gate 1 as `check` findings: entries screening refuses, as written and as they would run (after
 * `${…}` interpolation with this environment, which is what serve screens right before a spawn),
 * and remote servers that would get credentials over plain http (`gates/cleartext.ts`).
 */
import process from "node:process";
import { cleartextRefusal } from "../gates/cleartext.ts";
import { type Refusal, refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import { contextFrom, interpolate } from "../manifest/interpolate.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Finding } from "./static.ts";

export function screeningFindings(
  m: Manifest,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Finding[] {
  const written = screenManifest(m);
  const { value: interpolated } = interpolate(
    { upstreams: m.upstreams, tools: m.tools },
    contextFrom(env, process.cwd()),
  );
  const atRun = screenManifest({ ...m, ...interpolated }).filter((r) =>
    !written.some((w) => w.where === r.where)
  );
  const refusals: Refusal[] = [
    ...written,
    ...atRun.map((r) => ({ ...r, reason: `${r.reason} (after \${…} interpolation)` })),
  ];
  const lines = [
    ...refusals.map(refusalLine),
    ...Object.values(m.upstreams).flatMap((u) => {
      if (u.kind === "stdio") return [];
      return cleartextRefusal(u, interpolated.upstreams[u.name]?.url ?? "", m.file) ?? [];
    }),
  ];
  if (lines.length === 0) {
    const n = Object.keys(m.upstreams).length + Object.keys(m.tools).length;
    return n
      ? [{
        level: "ok",
        area: "screening",
        message: `${n === 1 ? "1 entry passes" : `${n} entries pass`} config screening`,
      }]
      : [];
  }
  return lines.map((message) => ({ level: "problem", area: "screening", message }));
}
