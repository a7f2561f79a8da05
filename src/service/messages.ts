/**
 * The one-line messages about an adapter's service (none running, one already running), naming
 * the directory as the user would type it.
 */
import path from "node:path";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { displayPath } from "../manifest/paths.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Endpoint } from "./endpoint.ts";

/** The adapter directory as a user here would type it: "." for the working directory. */
export function shownDir(m: Manifest): string {
  return path.resolve(m.dir) === process.cwd() ? "." : displayPath(m.dir);
}

/** Refusing a second service for the adapter: where the first one runs, and how to stop it. */
export function alreadyRunningError(m: Manifest, running: Endpoint): HermitError {
  return new HermitError(
    `a service for ${m.name} is already running at ${running.url} (pid ${running.pid}); stop it with 'hermit stop ${
      shownDir(m)
    }'`,
    Exit.usage,
  );
}

export function noServiceMessage(m: Manifest): string {
  const instructions = m.serve.instructions ? `, see ${m.serve.instructions}` : "";
  return `no service is running for ${m.name}; start it with 'hermit serve ${
    shownDir(m)
  } --standalone'${instructions}`;
}
