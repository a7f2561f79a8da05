/**
 * What hermit reports as the server in `initialize`, in a session and in the service's warm
 * answers alike: the adapter's name, version (else hermit's) and description.
 */
import type { Implementation } from "@modelcontextprotocol/sdk/types.js";
import type { Manifest } from "../manifest/types.ts";
import { VERSION } from "../version.ts";

export function serverInfo(m: Manifest): Implementation {
  return { name: m.name, version: m.version ?? VERSION, description: m.description };
}
