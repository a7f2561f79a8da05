/**
 * The sandbox as `check` findings: for each stdio server and command tool, how it will be
 * confined here (`fs: landlock abi 7; network: none (namespace)`), what of its policy this
 * machine cannot enforce (a warning, or under `require` a refusal: exit 4), and every
 * `sandbox: off`. A forecast from what the machine offers; the live start then runs inside the
 * sandbox, and what its launcher could not do comes back as serve's warnings.
 */
import process from "node:process";
import { contextFrom } from "../manifest/interpolate.ts";
import type { Manifest } from "../manifest/types.ts";
import { refusalLine } from "../sandbox/enforcement.ts";
import { SandboxHost } from "../sandbox/host.ts";
import type { Finding } from "./static.ts";

export function sandboxFindings(
  m: Manifest,
  env: Readonly<Record<string, string | undefined>> = process.env,
  platform: NodeJS.Platform = process.platform,
): Finding[] {
  const host = new SandboxHost(m, {
    env,
    platform,
    interpolation: contextFrom(env, process.cwd()),
    quiet: true,
  });
  return host.entries().map((e): Finding => {
    const d = host.describe(e);
    if (e.settings.off) {
      return { level: "warning", area: "sandbox", message: `${e.label}: sandbox: off: it runs unconfined` };
    }
    if (d.missing.length && d.require) {
      return {
        level: "problem",
        area: "sandbox",
        message: refusalLine(e.label, host.enforcement(e)),
      };
    }
    if (d.missing.length) {
      return {
        level: "warning",
        area: "sandbox",
        message: `${e.label}: ${d.summary}; not enforced here: ${d.missing.join("; ")}`,
      };
    }
    return { level: "ok", area: "sandbox", message: `${e.label}: ${d.summary}` };
  });
}
