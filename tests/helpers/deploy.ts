/**
 * Running deploy and convert in-process for tests: an isolated home and project, a fixed hermit
 * command (so written files do not depend on the runtime), snapshots of directory trees to compare
 * byte for byte, and the golden-file layout under tests/fixtures/hosts/<host>/<scope>/.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type DeployOptions, runDeploy } from "../../src/deploy/run.ts";
import type { DeployReport } from "../../src/deploy/report.ts";
import { fixtures } from "./hermit.ts";
import { tempDir } from "./tmp.ts";

export const HOST_FIXTURES = path.join(fixtures, "hosts");
export const GOLDEN_ADAPTER = path.join(HOST_FIXTURES, "adapter");
const SELF = ["/opt/hermit/bin/hermit"];

export interface Sandbox {
  root: string;
  home: string;
  project: string;
  env: Record<string, string>;
  cleanup(): void;
}

export function sandbox(): Sandbox {
  const t = tempDir("hermit-deploy-");
  const home = path.join(t.path, "home");
  const project = path.join(t.path, "project");
  mkdirSync(home);
  mkdirSync(project);
  const env = { HOME: home, HERMIT_HOME: path.join(t.path, "hermit-state") };
  return { root: t.path, home, project, env, cleanup: t.cleanup };
}

export function deploy(
  s: Sandbox,
  opts: Partial<DeployOptions> & { scope?: DeployOptions["scope"] } = {},
): Promise<DeployReport> {
  const scope = opts.scope ?? "project";
  return runDeploy({
    adapter: GOLDEN_ADAPTER,
    scope,
    project: scope === "project" ? s.project : undefined,
    hosts: [],
    dryRun: false,
    remove: false,
    force: false,
    platform: "linux",
    env: s.env,
    home: s.home,
    self: SELF,
    ...opts,
  });
}

/** A copy of the golden adapter at `root/name`, its hermit.yaml changed by `edit`. */
export function goldenCopy(root: string, name: string, edit: (yaml: string) => string = (y) => y): string {
  const dir = path.join(root, name);
  cpSync(GOLDEN_ADAPTER, dir, { recursive: true });
  const file = path.join(dir, "hermit.yaml");
  writeFileSync(file, edit(readFileSync(file, "utf8")));
  return dir;
}

/** Every file under `dir` (relative path → bytes), leaving out `skip` names at any depth. */
export function snapshot(dir: string, skip: string[] = [".hermit"]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      if (skip.includes(name)) continue;
      const r = rel ? path.join(rel, name) : name;
      if (statSync(path.join(dir, r)).isDirectory()) walk(r);
      else out.set(r.split(path.sep).join("/"), readFileSync(path.join(dir, r)));
    }
  };
  if (existsSync(dir)) walk("");
  return out;
}

/** Every directory under `dir`, relative. */
export function dirsUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const r = rel ? path.join(rel, name) : name;
      if (statSync(path.join(dir, r)).isDirectory()) {
        out.push(r);
        walk(r);
      }
    }
  };
  walk("");
  return out.sort();
}

export function copyTree(from: string, to: string): void {
  if (existsSync(from)) cpSync(from, to, { recursive: true });
}
